// A display for someone who may watch but not touch (a space shared with them as viewer):
// the client's side of an RFB (VNC) connection, read message by message, with what would act
// on the guest taken out (keys, pointer, clipboard, desktop size, xvp's power operations,
// QEMU's extended key events) and what asks for pictures passed on. Written here because no
// Debian library parses the client's half of RFB as a stream; it is small and it is the point:
// a message it does not know ends the connection rather than passing through.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bowline::api {

class RfbViewOnly {
 public:
  // What of `bytes` (the next bytes from the client, split anywhere) goes on to the server.
  // Throws std::runtime_error for a message it does not know: close the connection.
  std::string filter(std::string_view bytes);

 private:
  enum class Stage { Version, Security, SecurityAnswer, ClientInit, Messages };
  // The length of the message at the start of pending_, once enough of it is there to tell;
  // 0: not yet.
  std::size_t message_length() const;
  bool passes() const;  // the message at the start of pending_ asks for pictures only

  Stage stage_ = Stage::Version;
  bool version_3_3_ = false;  // RFB 3.3: the server picks the security type, the client says none
  std::size_t security_answer_ = 0;  // bytes of a VNC authentication's response
  std::string pending_;              // of a message not yet whole
  std::size_t skip_ = 0;             // bytes still to come of a message being dropped
};

}  // namespace bowline::api
