// SPDX-License-Identifier: MIT
#include "ckpt/pickle/imports_report.h"

#include "ckpt/pickle/call_flow.h"

#include <algorithm>
#include <vector>

namespace ckpt {
namespace {

// How many values the graph would hold with every shared reference copied out: what a reader that
// walks it as a tree builds (a JSON dump, repr, copy.deepcopy, a scanner's symbolic interpreter).
// The graph itself keeps one node per object, so the machine never builds the expansion. A
// reference back into a value still being walked (a cycle) counts once: CPython builds cycles
// without copying anything. Saturates far below overflow.
uint64_t unfoldedSize(const ValueGraph& graph)
{
    constexpr uint64_t kCap = uint64_t(1) << 62;
    std::vector<uint64_t> size(graph.size(), 0);
    std::vector<uint8_t> state(graph.size(), 0); // 0 new, 1 being walked, 2 done
    uint64_t largest = 0;
    auto children = [&](NodeId id, auto&& visit) {
        const Node& n = graph[id];
        for (NodeId c : n.items)
            visit(c);
        for (NodeId c : {n.a, n.b, n.c, n.state}) {
            if (c != kNoNode)
                visit(c);
        }
    };
    std::vector<NodeId> stack;
    for (NodeId root = 0; root < graph.size(); ++root) {
        if (state[root] != 0)
            continue;
        stack.push_back(root);
        while (!stack.empty()) {
            const NodeId id = stack.back();
            if (state[id] == 0) {
                state[id] = 1;
                children(id, [&](NodeId c) {
                    if (graph.valid(c) && state[c] == 0)
                        stack.push_back(c);
                });
                continue;
            }
            stack.pop_back();
            if (state[id] == 2)
                continue;
            uint64_t total = 1;
            children(id, [&](NodeId c) {
                const uint64_t part = graph.valid(c) && state[c] == 2 ? size[c] : 1;
                total = std::min(kCap, total + part);
            });
            size[id] = total;
            state[id] = 2;
            largest = std::max(largest, total);
        }
    }
    return largest;
}

} // namespace

void ImportsReport::add(const std::string& record, const std::vector<PickleGlobal>& globals,
                        const std::vector<GetattrUse>& getattrUses, const CalledGlobals* called)
{
    // CPython imports a GLOBAL's module by its exact text: a name with whitespace or control
    // characters ('posix\r' from CRLF line ends) fails to import, so the file cannot be loaded as
    // read here; what a differently lenient reader would make of it is not analysed.
    auto importable = [](const std::string& s) {
        return std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
    };
    for (const auto& g : globals) {
        if (g.literal && (!importable(g.module) || !importable(g.name))) {
            malformed = true;
            notes.push_back(record + ": the global '" + g.module + " " + g.name
                            + "' has whitespace or control characters in its name, which no import resolves: CPython "
                              "refuses the file, and it could not be fully analysed");
        }
        const std::string module = g.literal ? g.module : "?";
        const std::string name = g.literal ? g.name : "?";
        auto it = std::find_if(entries.begin(), entries.end(), [&](const ImportEntry& e) {
            return e.record == record && e.module == module && e.name == name;
        });
        if (it == entries.end()) {
            ImportEntry e;
            e.record = record;
            e.module = module;
            e.name = name;
            e.safety = classifyGlobal(module, name, e.reason);
            const auto how = called ? called->find(e.path()) : CalledGlobals::const_iterator();
            const bool isCalled = called && how != called->end();
            if (called && e.safety == ImportSafety::Dangerous && !isCalled && isBroadDangerRule(module, name)) {
                e.safety = ImportSafety::Unknown;
                e.reason = "referenced as a value but never called (" + e.reason + ")";
            } else if (isCalled && e.safety == ImportSafety::Dangerous && how->second.find("REDUCE") == std::string::npos
                       && how->second.find("NEWOBJ") == std::string::npos) {
                e.reason += "; " + how->second; // reached a call through a helper: say which
            } else if (isCalled && strict && e.safety == ImportSafety::Unknown) {
                e.safety = ImportSafety::Dangerous;
                e.reason = how->second + ", and outside the allowlist (--strict: " + e.reason + ")";
            }
            entries.push_back(std::move(e));
            it = entries.end() - 1;
        }
        ++it->count;
    }
    // builtins.getattr is judged by how it is used, when the machine saw every use.
    for (auto& e : entries) {
        if (e.record != record || e.module != "builtins" || e.name != "getattr" || getattrUses.empty())
            continue;
        std::string why;
        bool benign = true;
        for (const auto& use : getattrUses) {
            if (!isBenignGetattr(use, why)) {
                benign = false;
                break;
            }
        }
        if (benign && !strict) {
            e.safety = ImportSafety::Unknown;
            e.reason = "only references enum members or bound methods (getattr(Class, 'NAME'), getattr(obj, 'method'))";
        } else if (!benign) {
            e.reason = why;
        }
    }
}

CallFlow ImportsReport::addMachine(const std::string& record, const PickleMachine& machine)
{
    CallFlow flow = analyseCallFlow(machine.graph());
    add(record, machine.globals(), machine.getattrUses(), &flow.called);
    // A memo/DUP expansion ("billion laughs"): a few hundred bytes that reference one object 2^k
    // times. The graph holds it small; a reader that copies values out does not. Flagged at a
    // million values and a thousand times the objects the pickle really holds: benign sharing
    // (tied weights, one storage under many views, a repeated dtype) stays within a few times.
    const uint64_t unfolded = unfoldedSize(machine.graph());
    const uint64_t held = std::max<uint64_t>(1, machine.graph().size());
    if (unfolded >= 1000000 && unfolded / held >= 1000) {
        notes.push_back(record + ": resource exhaustion: its " + std::to_string(held) + " values, shared through the memo "
                        "or DUP, expand to " + (unfolded >= (uint64_t(1) << 62) ? std::string("more than 4.6e18")
                                                                                 : std::to_string(unfolded))
                        + " (" + std::to_string(unfolded / held) + " times) when copied out (a 'billion laughs' "
                        "pickle); a loader or scanner that walks it as a tree runs out of memory");
        structuralDanger = true;
    }
    if (flow.indirectCalls > 0) {
        notes.push_back(record + ": calls the result of another call " + std::to_string(flow.indirectCalls)
                        + " time(s), which is how getattr / partial gadgets run code; benign checkpoints never do");
        structuralDanger = true;
    }
    // A write into a module, class or module-level object poisons what later calls reach: the
    // allow-listed torch._utils._rebuild_tensor_v2 runs cProfile.run once a BUILD replaced it.
    for (const GlobalWrite& w : flow.writes) {
        const auto dot = w.target.rfind('.');
        const std::string module = dot == std::string::npos ? w.target : w.target.substr(0, dot);
        const std::string name = dot == std::string::npos ? std::string() : w.target.substr(dot + 1);
        for (auto& e : entries) {
            if (e.record == record && e.module == module && e.name == name) {
                e.safety = ImportSafety::Dangerous;
                e.reason = "written to while unpickling (" + w.how + "): later uses of it run what the pickle put there";
            }
        }
        notes.push_back(record + ": writes into " + w.target + " (" + w.how + "); a checkpoint never changes a module or class");
        structuralDanger = true;
    }
    return flow;
}

void ImportsReport::judgeNested(const std::string& record, const std::string& loader, bool benign, const std::string& why)
{
    for (auto& e : entries) {
        if (e.record != record || e.path() != loader)
            continue;
        if (benign && e.safety == ImportSafety::Dangerous) {
            e.safety = ImportSafety::Safe;
            e.reason = "unpickles nested bytes, which were read: " + why;
        } else if (!benign) {
            e.safety = ImportSafety::Dangerous;
            e.reason = "unpickles nested bytes: " + why;
        }
    }
}

bool ImportsReport::anyDangerous() const
{
    return structuralDanger || count(ImportSafety::Dangerous) > 0;
}

int ImportsReport::count(ImportSafety safety) const
{
    return static_cast<int>(std::count_if(entries.begin(), entries.end(), [&](const ImportEntry& e) { return e.safety == safety; }));
}

} // namespace ckpt