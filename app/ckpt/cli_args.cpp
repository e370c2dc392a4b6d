// SPDX-License-Identifier: MIT
#include "cli_args.h"

#include <stdexcept>

std::optional<std::string> CliArgs::option(const std::string& name) const
{
    for (const auto& [k, v] : options) {
        if (k == name)
            return v;
    }
    return std::nullopt;
}

CliArgs parseCliArgs(const std::vector<std::string>& args, const std::set<std::string>& knownFlags,
                     const std::set<std::string>& valueOptions)
{
    CliArgs out;
    bool onlyPositional = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (onlyPositional || a.size() < 2 || a[0] != '-') {
            out.positional.push_back(a);
        } else if (a == "--") {
            onlyPositional = true;
        } else if (knownFlags.contains(a)) {
            out.flags.insert(a);
        } else if (valueOptions.contains(a)) {
            if (i + 1 == args.size())
                throw std::invalid_argument("option " + a + " needs a value");
            out.options.emplace_back(a, args[++i]);
        } else {
            throw std::invalid_argument("unknown option " + a);
        }
    }
    return out;
}
