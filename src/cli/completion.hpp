// Shell completion: what may come next on a `bowline` command line, from the CLI's own tree of
// verbs and options (so a new verb or flag completes without touching the shell script), and
// where a verb takes a space's, template's or pool's name, the names the server has. The bash
// script (packaging/bowline.bash-completion) asks `bowline __complete CWORD WORD...`.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace bowline::cli {

enum class NameKind { Spaces, Templates, Pools };

// The server's names of one kind; empty when it cannot be asked. `server`: a --server given
// on the line being completed (empty: the usual BOWLINE_SERVER, login file, default).
using NameSource =
    std::function<std::vector<std::string>(NameKind kind, const std::string& server)>;

// The word the shell asks for when a slot takes a file name (the script hands it to bash's own
// file completion).
inline constexpr const char* kCompleteFiles = "__files__";

// Candidates for the word `current` after `words` (the command line before it, words[0] being
// the program): sub-verbs, options, option values and names, each starting with `current`, in
// the tree's order; or the single entry kCompleteFiles. Hidden verbs are never offered.
std::vector<std::string> complete(CLI::App& app, const std::vector<std::string>& words,
                                  const std::string& current, const NameSource& names);

// The names as the server lists them, asked with a short timeout (a completion must not
// hang the shell); nothing when the server cannot be reached or refuses.
std::vector<std::string> server_names(NameKind kind, const std::string& server);

// `bowline __complete CWORD WORD...` (bash's COMP_CWORD and COMP_WORDS): prints the candidates,
// one per line, and returns 0 whatever happens (an error must not end up in the user's line).
int run_complete(CLI::App& app, int argc, char** argv);

}  // namespace bowline::cli
