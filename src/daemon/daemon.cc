// Placeholder until the daemon lands.
namespace rota::daemon {}
