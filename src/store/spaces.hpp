// Spaces: one row per VM, with the state the engine believes and the state the user wants.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/records.hpp"
#include "store/repository.hpp"

namespace bowline::store {

class SpaceRepository : public Repository {
 public:
  using Repository::Repository;

  // ConflictError when the id or the domain name is taken or the owner already has a space
  // of that name; NotFoundError when the owner, template or pool does not exist.
  Space create(const NewSpace& space);
  std::optional<Space> get(std::string_view id);
  std::optional<Space> find_by_domain_name(std::string_view domain_name);
  std::optional<Space> find_by_name(std::int64_t owner_id, std::string_view name);
  std::vector<Space> list();  // ordered by creation
  std::vector<Space> list_for_owner(std::int64_t owner_id);
  std::vector<Space> list_for_pool(std::int64_t pool_id);
  std::vector<Space> list_for_template(std::int64_t template_id);
  // Running spaces without an address of bowline's choosing (NAT, kubevirt): those whose
  // address only their node knows.
  std::vector<Space> list_running_without_ip();
  std::int64_t count();

  // The setters throw NotFoundError for an unknown id and stamp updated_at.
  // `error` is kept with the state (empty clears it).
  void set_state(std::string_view id, SpaceState state, std::string_view error = {});
  // Compare-and-set: moves to `to` only from `from`; false (and no change) otherwise.
  bool transition(std::string_view id, SpaceState from, SpaceState to, std::string_view error = {});
  void set_desired_state(std::string_view id, DesiredState desired);
  // When (Unix ms) and why the space was suspended (shown while it is).
  void set_suspended(std::string_view id, std::int64_t at_ms, std::string_view reason);
  void set_disk_bytes(std::string_view id, std::int64_t bytes);
  void set_applied_template_revision(std::string_view id, std::int64_t revision);
  // The revision and the parts' fingerprints (a JSON object) a start applied.
  void set_applied(std::string_view id, std::int64_t revision, std::string_view parts);
  // The cloud-init instance-id the next seed carries (empty: the space's first).
  void set_instance_id(std::string_view id, std::string_view instance_id);
  void set_ip(std::string_view id, const std::optional<std::string>& ip);
  void set_node(std::string_view id, std::string_view node);
  // A new owner (user delete --transfer-to); ConflictError when they have a space of that name.
  void set_owner(std::string_view id, std::int64_t owner_id);
  // The browser terminal's key pair (records.hpp), for a space made before they were.
  void set_terminal_key(std::string_view id, std::string_view private_key,
                        std::string_view public_line);

  // Hands one unclaimed member of the pool to `owner_id` under `name`, atomically (two claims
  // never get the same member): a running member if there is one, else a stopped one; the
  // member leaves the pool. nullopt when none is ready. ConflictError on a taken name.
  std::optional<Space> claim_pool_member(std::int64_t pool_id, std::int64_t owner_id,
                                         std::string_view name);

  // Removes the space and its IP leases (operations and events keep its id). false when absent.
  bool remove(std::string_view id);

 private:
  std::vector<Space> select_where(const std::string& condition, std::optional<std::int64_t> key);
  void update_one(std::string_view id, const std::string& assignments,
                  const std::function<void(Statement&)>& bind_values);
};

}  // namespace bowline::store
