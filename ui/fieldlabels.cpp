// SPDX-License-Identifier: MIT
#include "ui/fieldlabels.h"

#include <filesystem>
#include <map>

std::vector<std::string> fieldLabels(const std::vector<ckpt::StateField>& fields)
{
    std::map<std::string, int> count;
    for (const ckpt::StateField& field : fields)
        ++count[field.name];
    std::vector<std::string> labels;
    labels.reserve(fields.size());
    for (const ckpt::StateField& field : fields) {
        std::string label = field.name;
        if (count[field.name] > 1)
            label += " (" + std::filesystem::path(field.from.file).filename().string() + ")";
        labels.push_back(std::move(label));
    }
    return labels;
}
