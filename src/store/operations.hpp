// Operations (long-running work with progress) and the event log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/records.hpp"
#include "store/repository.hpp"

namespace bowline::store {

class OperationRepository : public Repository {
 public:
  using Repository::Repository;

  // A new operation in state pending, progress 0.
  Operation create(const std::optional<std::string>& space_id, std::string_view kind);
  std::optional<Operation> get(std::int64_t id);
  std::vector<Operation> list_for_space(std::string_view space_id);  // newest first
  std::vector<Operation> list_unfinished();                          // oldest first

  // State running, the current step and its progress (clamped to 0..100, and never below
  // what the operation already reached: a step that reports less keeps the percent it had).
  // Returns the percent recorded. NotFoundError; StoreError when the operation has already
  // finished.
  int progress(std::int64_t id, std::string_view step, int percent);
  // Finished: succeeded (progress 100), or failed with the reason kept. StoreError when the
  // operation has already finished.
  void succeed(std::int64_t id);
  void fail(std::int64_t id, std::string_view error);
  // Drops operations that finished before `time` (Unix ms); unfinished ones always stay.
  int prune_finished_before(std::int64_t time);

 private:
  void finish(std::int64_t id, OperationState state, std::string_view error);
};

class EventRepository : public Repository {
 public:
  using Repository::Repository;

  Event append(std::string_view kind, const std::optional<std::string>& space_id,
               const nlohmann::json& payload = nlohmann::json::object());
  // Events with seq > `after`, in seq order, at most `limit` of them. A client that has seen
  // up to seq N resumes with events_since(N, ...); events_since(0, ...) starts at the oldest.
  std::vector<Event> events_since(std::int64_t after, std::size_t limit);
  std::int64_t latest_seq();  // 0 when there are none
  // Drops events older than `time` (Unix ms); seq numbers are never reused.
  int prune_before(std::int64_t time);
};

}  // namespace bowline::store
