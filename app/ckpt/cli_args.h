// SPDX-License-Identifier: MIT
// The few argument shapes ckpt needs: positionals, boolean flags and `--name value` options.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

struct CliArgs {
    std::vector<std::string> positional;
    std::set<std::string> flags;
    std::vector<std::pair<std::string, std::string>> options;

    bool has(const std::string& flag) const { return flags.contains(flag); }
    std::optional<std::string> option(const std::string& name) const;
};

/// `valueOptions` lists the options that take a value. Throws std::invalid_argument with a
/// message for unknown options or a missing value.
CliArgs parseCliArgs(const std::vector<std::string>& args, const std::set<std::string>& knownFlags,
                     const std::set<std::string>& valueOptions);
