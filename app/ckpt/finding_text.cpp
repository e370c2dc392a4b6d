// SPDX-License-Identifier: MIT
#include "finding_text.h"

#include <algorithm>
#include <map>
#include <ostream>

void printFindingsByComponent(std::ostream& out, const std::vector<ckpt::Finding>& findings)
{
    if (findings.empty()) {
        out << "OK: no findings\n";
        return;
    }
    std::map<ckpt::Component, std::vector<const ckpt::Finding*>> groups;
    for (const auto& f : findings)
        groups[f.component].push_back(&f);
    std::vector<std::pair<ckpt::Component, std::vector<const ckpt::Finding*>>> ordered(groups.begin(), groups.end());
    auto worst = [](const std::vector<const ckpt::Finding*>& g) {
        ckpt::Severity s = ckpt::Severity::Info;
        for (const auto* f : g)
            s = std::max(s, f->severity);
        return s;
    };
    std::stable_sort(ordered.begin(), ordered.end(), [&](const auto& a, const auto& b) { return worst(a.second) > worst(b.second); });
    std::size_t counts[3] = {0, 0, 0};
    for (auto& [component, group] : ordered) {
        std::stable_sort(group.begin(), group.end(), [](const auto* a, const auto* b) { return a->severity > b->severity; });
        out << "\n== " << ckpt::componentName(component) << "\n";
        for (const auto* f : group) {
            ++counts[static_cast<int>(f->severity)];
            std::string sev = ckpt::severityName(f->severity);
            sev.resize(8, ' ');
            out << sev << f->rule << "\n        " << f->message << "\n";
            for (const auto& c : f->checkpoints)
                out << "        checkpoint: " << c << "\n";
            if (!f->file.empty())
                out << "        file: " << f->file << "\n";
            for (const auto& e : f->evidence)
                out << "        " << e.what << ": " << e.value << "  (" << e.where << ")\n";
            if (!f->assumes.empty())
                out << "        assumes: " << f->assumes << "\n";
            if (!f->hint.empty())
                out << "        hint: " << f->hint << "\n";
        }
    }
    out << "\n" << counts[2] << " error(s), " << counts[1] << " warning(s), " << counts[0] << " info\n";
}
