#include "spec/document.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "spec/validators.hpp"
#include "util/utf8.hpp"

namespace bowline::spec {
namespace {

// Bounds that keep hostile documents (deep nesting, alias bombs) cheap to reject. Aliases
// count at every use: a 300 KB scalar aliased 90000 times is 27 GB to check and quote.
constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxNodes = 100000;
constexpr std::size_t kMaxBytes = 1 << 20;
constexpr std::size_t kMaxExpandedBytes = 4 << 20;

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Records where a document starts and where its first node (other than null) is.
class DocumentProbe : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> start, content;

  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { note(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    note(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    note(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    note(mark);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& mark) {
    if (!content) content = mark;
  }
};

}  // namespace

// Walks the documents' events, and stops when a document starts where the last one did.
Trailing after_first_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  int previous = -1;
  for (std::size_t index = 0;; ++index) {
    DocumentProbe probe;
    if (!parser.HandleNextDocument(probe) || !probe.start) return {};
    if (probe.start->pos == previous) return {Trailing::Stray, *probe.start};
    previous = probe.start->pos;
    if (index > 0 && probe.content) return {Trailing::Document, *probe.content};
  }
}

Document::Document(std::string text, Diagnostics& diagnostics) : text_(std::move(text)) {
  if (text_.size() > kMaxBytes) {
    diagnostics.error(0, 0, "", "the template is larger than 1 MiB");
    return;
  }
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  for (auto at = text_.find("${{"); at != std::string::npos; at = text_.find("${{", at + 3))
    expressions_.push_back(at);
  // Every string a Spec holds comes from this text or a variable's value, and JSON output needs
  // them all to be UTF-8.
  if (const auto bad = util::invalid_utf8_at(text_); bad != std::string::npos) {
    const auto p = position_of_offset(bad);
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text_[bad]));
    diagnostics.error(p.line, p.column, "",
                      std::string("the template is not valid UTF-8 (byte ") + byte + ")");
    return;
  }
  Trailing trailing;
  try {
    root_ = YAML::Load(text_);
    trailing = after_first_document(text_);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    const int column = e.mark.column >= 0 ? e.mark.column + 1 : 0;
    // yaml-cpp's depth guard says only "bad file".
    diagnostics.error(
        line, column, "",
        "YAML syntax: " +
            (e.msg == "bad file" ? std::string("nested more than 500 levels deep") : e.msg));
    root_ = YAML::Node();
    return;
  }
  if (trailing.kind != Trailing::Nothing) {
    const Position p{trailing.mark.line + 1, trailing.mark.column + 1};
    const auto pos = static_cast<std::size_t>(trailing.mark.pos);
    if (trailing.kind == Trailing::Stray) {
      diagnostics.error(p.line, p.column, "",
                        "YAML syntax: unexpected '" +
                            (pos < text_.size() ? text_.substr(pos, 1) : std::string()) + "'");
      root_ = YAML::Node();
      return;
    }
    diagnostics.error(p.line, p.column, "",
                      "a second YAML document starts here (after ---): a template is one "
                      "document, and bowline would ignore these fields");
  }
  if (!root_.IsDefined() || root_.IsNull()) {
    diagnostics.error(
        1, 1, "", "the template is empty: it must be a mapping of fields (image, network, ...)");
    return;
  }
  if (!root_.IsMap()) {
    const auto p = position(root_);
    diagnostics.error(p.line, p.column, "",
                      "the template must be a mapping of fields (image, network, ...)");
    return;
  }
  Budget budget;
  check_keys(root_, "", 0, budget, diagnostics);
  ok_ = !budget.exceeded;  // the fields are not read: that is where the cost would explode
}

bool Document::spend(Budget& budget, const YAML::Node& at, const std::string& path,
                     std::size_t bytes, Diagnostics& diagnostics) {
  if (budget.exceeded) return false;
  budget.bytes += bytes;
  if (++budget.nodes <= kMaxNodes && budget.bytes <= kMaxExpandedBytes) return true;
  budget.exceeded = true;
  const auto p = position(at);
  diagnostics.error(p.line, p.column, path,
                    budget.nodes > kMaxNodes
                        ? "the document holds more than 100000 values, counting every use of an "
                          "alias: write it out plainly"
                        : "aliases repeat more than 4 MiB of text: write it out plainly");
  return false;
}

void Document::check_keys(const YAML::Node& node, const std::string& path, int depth,
                          Budget& budget, Diagnostics& diagnostics) {
  if (!spend(budget, node, path, node.IsScalar() ? node.Scalar().size() : 0, diagnostics)) return;
  if (depth > kMaxDepth) {
    if (depth == kMaxDepth + 1) {
      const auto p = position(node);
      diagnostics.error(p.line, p.column, path, "the document is nested more than 64 levels deep");
    }
    return;
  }
  if (node.IsMap()) {
    std::map<std::string, YAML::Node> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      // A copy: it-> returns a proxy that dies with the full expression, so a reference to
      // it->first dangles (g++ warns; ASan under the fuzzer caught the read).
      const YAML::Node key = it->first;
      const auto kp = position(key);
      if (!key.IsScalar()) {
        diagnostics.error(kp.line, kp.column, path, "keys must be plain strings");
        continue;
      }
      const auto name = key.Scalar();
      if (!spend(budget, key, path, name.size(), diagnostics)) return;
      if (name == "<<" && is_plain_scalar(key)) {
        diagnostics.error(kp.line, kp.column, child_path(path, name),
                          "YAML merge keys (<<) are not supported: write the fields out");
        continue;
      }
      if (auto [prior, inserted] = seen.emplace(name, key); !inserted) {
        diagnostics.error(kp.line, kp.column, child_path(path, name),
                          "duplicate key (first at line " +
                              std::to_string(position(prior->second).line) +
                              "): YAML readers disagree on which one wins, so say it once");
        continue;
      }
      check_keys(it->second, child_path(path, name), depth + 1, budget, diagnostics);
    }
  } else if (node.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : node)
      check_keys(item, path + "[" + std::to_string(i++) + "]", depth + 1, budget, diagnostics);
  }
}

Position Document::position(const YAML::Node& node) const {
  const auto mark = node.Mark();
  if (mark.line < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

Position Document::position_of_offset(std::size_t offset) const {
  offset = std::min(offset, text_.size());
  const auto line = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - 1;
  return {static_cast<int>(line - line_starts_.begin()) + 1, static_cast<int>(offset - *line) + 1};
}

Position Document::expression_position(const YAML::Node& scalar, std::size_t expression,
                                       std::size_t offset) const {
  const auto mark = scalar.Mark();
  if (mark.pos < 0) return position(scalar);
  // The expression appears verbatim in the source after the scalar's start.
  const auto first = std::lower_bound(expressions_.begin(), expressions_.end(),
                                      static_cast<std::size_t>(mark.pos));
  if (static_cast<std::size_t>(expressions_.end() - first) <= expression) return position(scalar);
  return position_of_offset(first[static_cast<std::ptrdiff_t>(expression)] + offset);
}

}  // namespace bowline::spec
