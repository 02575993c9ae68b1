// Is the guest ready? cloud-init prints one line when it has finished; the serial console
// log that virtlogd writes for the domain holds it, with no agent needed in the guest.
#pragma once

#include <string>
#include <vector>

namespace bowline::engine {

struct Readiness {
  bool booted = false;                  // anything on the console yet
  bool finished = false;                // cloud-init's final line seen
  bool failed = false;                  // cloud-init reported errors
  std::string detail;                   // the line that decided it, or the failure
  std::vector<std::string> last_lines;  // the console's tail, for `space info`
};

// Reads at most the last `max_bytes` of the log (after what keep_console_before_restore kept).
Readiness read_readiness(const std::string& console_log, std::size_t tail_lines = 10,
                         std::size_t max_bytes = 256 * 1024);

// What read_readiness() parses: the kept part, then the log's last bytes, `max_bytes` in all.
std::string readiness_text(const std::string& console_log, std::size_t max_bytes = 256 * 1024);

// QEMU truncates the console log at every start, also the one that restores a suspended
// space's memory: its guest did not boot again, yet its log would read "not booted". Before
// such a start, the log's tail is added to `<log>.kept` (at most `max_bytes`), which
// read_readiness() reads first; before a cold start it is removed (a new boot decides).
void keep_console_before_restore(const std::string& console_log,
                                 std::size_t max_bytes = 256 * 1024);
void forget_kept_console(const std::string& console_log);
// The same on text already read (unit tests).
Readiness parse_readiness(const std::string& console_text, std::size_t tail_lines = 10);

}  // namespace bowline::engine
