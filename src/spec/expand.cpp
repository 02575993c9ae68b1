#include "spec/expand.hpp"

#include <cctype>

#include "spec/validators.hpp"
#include "util/control_chars.hpp"
#include "util/strings.hpp"
#include "util/utf8.hpp"

namespace bowline::spec {
namespace {

const std::vector<std::string_view> kFunctions = {"toLower", "toUpper", "quote"};

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool valid_var_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!is_ident_char(c)) return false;
  return true;
}

// A YAML double-quoted scalar (also a valid JSON string) on one line whatever the value holds:
// C0 and C1 controls, DEL and the Unicode line and paragraph separators escaped (YAML 1.1 readers
// such as cloud-init's PyYAML take U+0085, U+2028 and U+2029 as line breaks).
std::string quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (const auto control = util::control_at(s, i)) {
      if (control->code == U'\n') {
        out += "\\n";
      } else if (control->code == U'\r') {
        out += "\\r";
      } else if (control->code == U'\t') {
        out += "\\t";
      } else {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(control->code >> shift) & 15];
      }
      i += control->length - 1;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct Token {
  std::string_view text;
  std::size_t offset;  // from the expression's `$`
};

class ExpressionEvaluator {
 public:
  ExpressionEvaluator(std::size_t index, const Variables* values, Expansion& out)
      : index_(index), values_(values), out_(out) {}

  // body: text between `${{` and `}}`; body_offset: where it starts from `$`.
  std::optional<std::string> evaluate(std::string_view body, std::size_t body_offset) {
    std::vector<std::vector<Token>> commands(1);
    for (std::size_t i = 0; i < body.size();) {
      const char c = body[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '|') {
        commands.emplace_back();
        ++i;
      } else {
        std::size_t j = i;
        while (j < body.size() && !std::isspace(static_cast<unsigned char>(body[j])) &&
               body[j] != '|')
          ++j;
        commands.back().push_back({body.substr(i, j - i), body_offset + i});
        i = j;
      }
    }
    std::optional<std::string> value;
    bool known = true, quoted = false;
    for (std::size_t k = 0; k < commands.size(); ++k) {
      auto& tokens = commands[k];
      if (tokens.empty())
        return error(body_offset, k == 0 ? "empty expression" : "empty pipeline step after |");
      // The operand (a variable) comes last in the first command; functions before it.
      std::vector<Token> functions(tokens.begin(), tokens.end());
      if (k == 0) {
        const Token operand = functions.back();
        functions.pop_back();
        if (operand.text.front() != '.') {
          if (is_function(operand.text))
            return error(operand.offset, "function " + std::string(operand.text) +
                                             " needs a value, e.g. ${{ " +
                                             std::string(operand.text) + " .space.name }}");
          return error(operand.offset, "expected a variable such as .user.username, got \"" +
                                           std::string(operand.text) + "\"");
        }
        auto looked_up = lookup(operand);
        if (!looked_up.first) return std::nullopt;  // error reported
        known = looked_up.second.has_value();
        value = std::move(looked_up.second);
        if (functions.size() > 1)
          return error(functions.front().offset,
                       "one function at a time: write ${{ .x | f | g }} to chain");
      } else if (functions.size() != 1) {
        return error(tokens.front().offset, "each step after | must be one function name");
      }
      for (auto it = functions.rbegin(); it != functions.rend(); ++it) {
        if (it->text.front() == '.') return error(it->offset, "only one variable per expression");
        if (!is_function(it->text)) {
          const auto hint = util::nearest(it->text, kFunctions);
          return error(it->offset, "unknown function \"" + std::string(it->text) + "\"" +
                                       (hint.empty() ? " (known: toLower, toUpper, quote)"
                                                     : " (did you mean " + hint + "?)"));
        }
        // toUpper would turn quote's \n into \N (a different escape): quote goes last.
        if (quoted)
          return error(it->offset, std::string(it->text) +
                                       " after quote would change its escapes: "
                                       "quote must be the last step");
        quoted = it->text == "quote";
        if (known) value = apply(it->text, *value);
      }
    }
    if (!known) {
      unknown_ = true;
      return std::string();
    }
    return value;
  }

  bool unknown() const { return unknown_; }

 private:
  static bool is_function(std::string_view name) {
    for (auto f : kFunctions)
      if (f == name) return true;
    return false;
  }

  static std::string apply(std::string_view function, const std::string& value) {
    if (function == "toLower") return util::to_lower(value);
    if (function == "toUpper") return util::to_upper(value);
    return quote(value);
  }

  std::optional<std::string> error(std::size_t offset, std::string message) {
    out_.errors.push_back({index_, offset, std::move(message)});
    return std::nullopt;
  }

  // first: the name is valid; second: its value, when values were given.
  std::pair<bool, std::optional<std::string>> lookup(const Token& operand) {
    const auto name = operand.text.substr(1);
    bool valid = false;
    if (name.starts_with("var.")) {
      valid = valid_var_name(name.substr(4));
      if (!valid) {
        error(operand.offset,
              "\"" + std::string(operand.text) +
                  "\" is not a valid variable name (letters, digits and _ after .var.)");
        return {false, std::nullopt};
      }
    } else {
      for (auto known : known_variables())
        if (known == name) valid = true;
      if (!valid) {
        std::vector<std::string_view> dotted;
        std::vector<std::string> storage;
        for (auto known : known_variables()) storage.push_back("." + std::string(known));
        for (const auto& s : storage) dotted.push_back(s);
        const auto hint = util::nearest(operand.text, dotted);
        error(operand.offset, "unknown variable \"" + std::string(operand.text) + "\"" +
                                  (hint.empty() ? "" : " (did you mean " + hint + "?)"));
        return {false, std::nullopt};
      }
    }
    if (!values_) return {true, std::nullopt};
    const auto it = values_->find(name);
    if (it == values_->end()) {
      error(operand.offset, "no value for " + std::string(operand.text) + " (give one with --var " +
                                std::string(name) + "=...)");
      return {false, std::nullopt};
    }
    if (util::invalid_utf8_at(it->second) != std::string::npos) {
      error(operand.offset, "the value of " + std::string(operand.text) + " is not valid UTF-8");
      return {false, std::nullopt};
    }
    return {true, it->second};
  }

  std::size_t index_;
  const Variables* values_;
  Expansion& out_;
  bool unknown_ = false;
};

}  // namespace

const std::vector<std::string_view>& known_variables() {
  static const std::vector<std::string_view> kKnown = {
      "user.username", "user.email",       "user.timezone", "user.id",     "space.name",
      "space.id",      "space.ip_address", "template.name", "template.id", "server.url"};
  return kKnown;
}

Expansion expand(std::string_view text, const Variables* values, Into into) {
  Expansion out;
  std::string result;
  bool unknown = false;
  std::size_t index = 0, pos = 0;
  for (;;) {
    const auto open = text.find("${{", pos);
    if (open == std::string_view::npos) {
      result.append(text.substr(pos));
      break;
    }
    out.templated = true;
    result.append(text.substr(pos, open - pos));
    const auto close = text.find("}}", open + 3);
    if (close == std::string_view::npos) {
      out.errors.push_back({index, 0, "unterminated ${{: expected }}"});
      break;
    }
    ExpressionEvaluator evaluator(index, values, out);
    const auto value = evaluator.evaluate(text.substr(open + 3, close - open - 3), 3);
    if (value && into == Into::Document && util::has_control_characters(*value, true)) {
      out.errors.push_back({index, 0,
                            "this value holds a line break or control character, which would "
                            "change the document: pipe it through quote (${{ ... | quote }})"});
    } else if (value) {
      if (evaluator.unknown()) unknown = true;
      result.append(*value);
    }
    pos = close + 2;
    ++index;
  }
  if (out.errors.empty() && !unknown) out.value = std::move(result);
  return out;
}

}  // namespace bowline::spec
