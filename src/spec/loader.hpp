// Template text -> validated Spec, with every problem found (not just the first).
#pragma once

#include <optional>
#include <string>

#include "spec/diagnostic.hpp"
#include "spec/expand.hpp"
#include "spec/spec.hpp"

namespace bowline::spec {

struct LoadResult {
  std::optional<Spec> spec;  // set when there are no errors
  Diagnostics diagnostics;
};

// With `values` null the template is validated without values: every expression is checked,
// and checks that depend on a value are left for when the values are known (name, hostname
// and any templated field keep their raw text in the result).
LoadResult load_spec(std::string text, const Variables* values);

}  // namespace bowline::spec
