#include "engine/page_report_watch.hpp"

namespace bowline::engine {

bool PageReportWatch::settled(TimePoint at, std::uint64_t rss_kib) {
  if (!since_) {
    since_ = at;
    first_kib_ = low_kib_ = rss_kib;
    return false;
  }
  if (rss_kib + step_kib_ <= low_kib_) {
    low_kib_ = rss_kib;
    since_ = at;
    return false;
  }
  return at - *since_ >= quiet_;
}

}  // namespace bowline::engine
