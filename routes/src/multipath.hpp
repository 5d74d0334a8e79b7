// SPDX-License-Identifier: GPL-2.0-or-later
// ecmp and adaptive: the models over all shortest paths (model.hpp). Private to routes/.
#pragma once

#include <memory>

#include "fabricplace/routes/model.hpp"

namespace fabricplace::routes {

/// The ecmp or adaptive model of spec.kind on `f`.
Result<std::unique_ptr<Model>> make_multipath(const Fabric& f, const Spec& spec);

}  // namespace fabricplace::routes
