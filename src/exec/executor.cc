// Placeholder until the executor lands.
namespace rota::exec {}
