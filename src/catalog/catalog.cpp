#include "catalog/catalog.hpp"

#include <algorithm>

namespace bowline::catalog {

const InstanceType* find_instance_type(std::string_view name) {
  const auto all = instance_types();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const auto& t) { return t.name == name; });
  return it == all.end() ? nullptr : &*it;
}

const Preference* find_preference(std::string_view name) {
  const auto all = preferences();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace bowline::catalog
