// The Spec as JSON: what `bowline template show` prints (sizes in bytes, defaults filled in).
#pragma once

#include <nlohmann/json.hpp>

#include "spec/spec.hpp"

namespace bowline::spec {

nlohmann::ordered_json to_json(const Spec& spec);

}  // namespace bowline::spec
