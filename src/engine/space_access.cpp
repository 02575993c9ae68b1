// The Engine's SpaceAccess: a space's console and display on its own node, checked to be that
// space's domain.
#include "engine/engine.hpp"

namespace bowline::engine {

std::string Engine::own_domain(const store::Space& space) {
  if (is_remote(space))
    throw EngineError(EngineError::Kind::Invalid, "the console and display of a space on node " +
                                                      space.node +
                                                      " are not available through bowline yet");
  // A domain of that name that another space made (or nobody we know) is not this space's.
  const auto info = hypervisor_.lookup(space.domain_name);
  if (info && info->metadata && info->metadata->space_id != space.id)
    throw EngineError(EngineError::Kind::Conflict,
                      "the domain " + space.domain_name + " belongs to another space");
  return space.domain_name;
}

std::unique_ptr<util::ByteStream> Engine::open_console(const std::string& space_id) {
  const auto space = store_.spaces().get(space_id);
  if (!space) return nullptr;
  return hypervisor_.open_console(own_domain(*space), {}, true);
}

int Engine::open_display(const std::string& space_id) {
  return hypervisor_.open_graphics(own_domain(require(space_id)), 0, true);
}

}  // namespace bowline::engine
