// SPDX-License-Identifier: MIT
#include "ckpt/findings/finding_groups.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

namespace ckpt {

const std::vector<Component>& diagnosisOrder()
{
    static const std::vector<Component> order = {Component::Data,     Component::Model,  Component::Optimizer,
                                                 Component::Scheduler, Component::Scaler, Component::Rng,
                                                 Component::Progress, Component::Environment, Component::Integrity,
                                                 Component::Security};
    return order;
}

int diagnosisRank(Component component)
{
    if (component == Component::Security)
        return 0;
    if (component == Component::Integrity)
        return 1;
    const auto& order = diagnosisOrder();
    return 2 + static_cast<int>(std::find(order.begin(), order.end(), component) - order.begin());
}

std::string messagePattern(const std::string& message)
{
    auto digit = [&](std::size_t i) { return i < message.size() && std::isdigit(static_cast<unsigned char>(message[i])); };
    std::string out;
    out.reserve(message.size());
    std::size_t i = 0;
    while (i < message.size()) {
        if (!digit(i)) {
            out += message[i++];
            continue;
        }
        // a number with its decimals and exponent (8, 0.001, 1e-05) becomes one '#'
        while (digit(i) || (message[i] == '.' && digit(i + 1)))
            ++i;
        if (i < message.size() && (message[i] == 'e' || message[i] == 'E')) {
            const std::size_t sign = (i + 1 < message.size() && (message[i + 1] == '-' || message[i + 1] == '+')) ? 1 : 0;
            if (digit(i + 1 + sign)) {
                i += 1 + sign;
                while (digit(i))
                    ++i;
            }
        }
        out += '#';
    }
    return out;
}

std::vector<FindingGroup> groupFindings(const std::vector<Finding>& findings, const std::vector<std::string>& checkpointOrder)
{
    std::map<std::string, std::size_t> position;
    for (std::size_t i = 0; i < checkpointOrder.size(); ++i)
        position.emplace(checkpointOrder[i], i);
    // A finding's place in the run: its first checkpoint's position (those of no checkpoint first).
    auto place = [&](const Finding& f) -> std::size_t {
        std::size_t best = 0;
        bool any = false;
        for (const auto& c : f.checkpoints) {
            const auto it = position.find(c);
            if (it != position.end() && (!any || it->second < best)) {
                best = it->second + 1;
                any = true;
            }
        }
        return any ? best : 0;
    };

    std::vector<FindingGroup> groups;
    std::map<std::tuple<std::string, int, int, std::string>, std::size_t> index;
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const Finding& f = findings[i];
        const auto key = std::make_tuple(f.rule, int(f.severity), int(f.component), messagePattern(f.message));
        auto [it, added] = index.emplace(key, groups.size());
        if (added)
            groups.push_back({f.rule, f.severity, f.component, f.message, f.hint, f.assumes, {}, {}});
        groups[it->second].members.push_back(i);
    }
    for (FindingGroup& g : groups) {
        std::stable_sort(g.members.begin(), g.members.end(),
                         [&](std::size_t a, std::size_t b) { return place(findings[a]) < place(findings[b]); });
        const Finding& first = findings[g.members.front()];
        g.message = first.message;
        g.hint = first.hint;
        g.assumes = first.assumes;
        for (const std::size_t m : g.members) {
            for (const auto& c : findings[m].checkpoints) {
                if (std::find(g.checkpoints.begin(), g.checkpoints.end(), c) == g.checkpoints.end())
                    g.checkpoints.push_back(c);
            }
        }
        std::stable_sort(g.checkpoints.begin(), g.checkpoints.end(), [&](const std::string& a, const std::string& b) {
            const auto pa = position.find(a), pb = position.find(b);
            return (pa == position.end() ? 0 : pa->second + 1) < (pb == position.end() ? 0 : pb->second + 1);
        });
    }
    std::stable_sort(groups.begin(), groups.end(), [](const FindingGroup& a, const FindingGroup& b) {
        return std::make_tuple(-int(a.severity), diagnosisRank(a.component), a.rule)
            < std::make_tuple(-int(b.severity), diagnosisRank(b.component), b.rule);
    });
    return groups;
}

namespace {

std::string shortName(const std::string& path)
{
    std::string p = path;
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string plural(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

} // namespace

std::vector<Finding> withoutRepeats(const std::vector<Finding>& findings)
{
    std::set<std::tuple<std::string, std::string, std::vector<std::string>>> seen;
    std::vector<Finding> out;
    for (const Finding& f : findings) {
        if (seen.insert({f.rule, f.message, f.checkpoints}).second)
            out.push_back(f);
    }
    return out;
}

std::string groupWhere(const FindingGroup& g)
{
    const std::size_t n = g.checkpoints.size();
    if (n == 0)
        return g.members.size() == 1 ? std::string() : std::to_string(g.members.size()) + " times";
    std::string s = std::to_string(n) + (n == 1 ? " checkpoint: " : " checkpoints: ") + shortName(g.checkpoints.front());
    if (n > 1)
        s += (n > 2 ? " ... " : ", ") + shortName(g.checkpoints.back());
    return s;
}

Verdict verdictOf(const std::vector<Finding>& findings, const std::vector<FindingGroup>& groups, std::size_t checkpoints, std::size_t rules)
{
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& f : findings)
        ++counts[static_cast<int>(f.severity)];
    Verdict v;
    if (counts[2] + counts[1] == 0) {
        v.headline = "nothing inconsistent found";
        if (rules && checkpoints)
            v.headline += " (" + std::to_string(rules) + " rules over " + plural(checkpoints, "checkpoint", "checkpoints") + ")";
        if (counts[0]) {
            std::size_t infoGroups = 0;
            for (const auto& g : groups)
                infoGroups += g.severity == Severity::Info;
            v.headline += "; " + plural(counts[0], "thing", "things") + " the files do not record or cannot decide (info), in "
                        + plural(infoGroups, "group", "groups");
        }
        v.headline += ".";
        return v;
    }
    v.headline = plural(counts[2], "error", "errors") + " and " + plural(counts[1], "warning", "warnings") + "; in the order to look at them:";
    for (const auto& g : groups) {
        if (g.severity == Severity::Info)
            continue;
        const std::string where = groupWhere(g);
        v.lines.push_back(std::string(severityName(g.severity)) + " " + g.rule + (where.empty() ? "" : " (" + where + ")") + ": " + g.message);
    }
    return v;
}

} // namespace ckpt
