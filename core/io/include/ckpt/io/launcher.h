// SPDX-License-Identifier: MIT
// Launchers: run a program locally or through a user-defined command prefix ("ssh gpu01 --",
// "srun --gres=gpu:1 --time=10 --", "env"), so that a laptop can validate on a cluster GPU node.
// The prefix is split into words the way a POSIX shell splits a simple command (quotes and
// backslashes; no expansion, no variables, no globbing), and the program and its arguments follow
// it unchanged: paths are passed through as given (a shared filesystem is assumed). No shell runs
// on this machine; what the prefix command does with the words (ssh joins them for the remote
// shell) is its own business, documented in the README.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt {

/// A prefix that cannot be split (an unterminated quote, a trailing backslash).
class LauncherError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Shell-style word splitting: blanks separate words; '...' keeps everything literally; "..." keeps
/// everything but \" \\ \$ \` (backslash-escaped); a backslash outside quotes escapes the next
/// character. Throws LauncherError on an unterminated quote or a trailing backslash.
std::vector<std::string> splitCommandLine(std::string_view text);

/// The argv to execute: the prefix's words, then `program`, then `arguments`, each unchanged. An
/// empty (or blank) prefix runs the program locally.
std::vector<std::string> launchCommand(std::string_view prefix, const std::string& program,
                                       const std::vector<std::string>& arguments);

/// For display and for logs: argv quoted so that a POSIX shell would split it back into the same words.
std::string quoteCommandLine(const std::vector<std::string>& argv);

} // namespace ckpt
