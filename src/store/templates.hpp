// Templates (YAML text with a revision) and pools (N ready members of one template).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "store/records.hpp"
#include "store/repository.hpp"

namespace bowline::store {

class TemplateRepository : public Repository {
 public:
  using Repository::Repository;

  // Revision 1. ConflictError when the name is taken.
  Template create(std::string_view name, std::string_view yaml,
                  std::optional<std::int64_t> author_id = std::nullopt);
  std::optional<Template> get(std::int64_t id);
  std::optional<Template> find_by_name(std::string_view name);
  std::vector<Template> list();  // ordered by name
  // New YAML, revision + 1, updated_at now; returns the stored result. NotFoundError.
  Template update(std::int64_t id, std::string_view yaml);
  // ConflictError while spaces or pools use it (naming how many); NotFoundError.
  void remove(std::int64_t id);
};

class PoolRepository : public Repository {
 public:
  using Repository::Repository;

  // ConflictError when the name is taken; NotFoundError for an unknown template.
  Pool create(std::string_view name, std::int64_t template_id, std::int64_t size);
  std::optional<Pool> get(std::int64_t id);
  std::optional<Pool> find_by_name(std::string_view name);
  std::vector<Pool> list();  // ordered by name
  void set_size(std::int64_t id, std::int64_t size);
  // Members stay as spaces of their own with no pool (delete them first if they should go).
  void remove(std::int64_t id);
};

}  // namespace bowline::store
