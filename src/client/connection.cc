// Placeholder until the client lands.
namespace rota::client {}
