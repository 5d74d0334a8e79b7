// PLACEHOLDER until the minhop/updn models land (replaced by the real models).
#include "fabricplace/routes/table.hpp"

namespace fabricplace::routes {

Result<Table> minhop_routes(const Fabric&) {
  return fail(ErrorCode::kUnsupported, "the minhop model is not built yet");
}
Result<Table> updn_routes(const Fabric&) {
  return fail(ErrorCode::kUnsupported, "the updn model is not built yet");
}

}  // namespace fabricplace::routes
