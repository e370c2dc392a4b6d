// SPDX-License-Identifier: MIT
// A LoRA adapter against its own adapter_config.json and the base weights beside it. peft rebuilds
// the adapter from the config, then loads the saved weights into it (huggingface/peft@5d602fdb
// src/peft/utils/save_and_load.py set_peft_model_state_dict: load_state_dict(strict=False), which
// still raises on a size mismatch and drops keys the rebuilt model has no place for). The module
// each rank applies to: tuners/lora/model.py _create_and_replace takes rank_pattern's key that
// utils/other.py get_pattern_key matches ("(.*\.)?(key)$"), else `r`; tuners_utils.py
// check_target_module_exists decides which modules get an adapter (a list: the name or a
// ".name" suffix; a string: re.fullmatch).
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include "ckpt/formats/python_json.h"
#include "ckpt/io/read_only_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

namespace ckpt::rules {
namespace {

// One adapted module: its low-rank pair. lora_A is [r, in] (embeddings: lora_embedding_A
// [r, num_embeddings]; convolutions [r, in, k, k]), lora_B is [out, r].
struct LoraPair {
    const ParameterEntry* a = nullptr;
    const ParameterEntry* b = nullptr;
};

struct AdapterConfig {
    std::string path;
    nlohmann::json json;
};

std::optional<AdapterConfig> adapterConfig(const TrainingState& s)
{
    for (const auto& f : s.layout.files) {
        if (f.role != "config" || std::filesystem::path(f.path).filename() != "adapter_config.json")
            continue;
        try {
            nlohmann::json j = parsePythonJson(readBoundedFile(f.path, kSidecarJsonLimit));
            if (j.is_object())
                return AdapterConfig{f.path, std::move(j)};
        } catch (const std::exception&) {
            // an unreadable config is the state reader's warning
        }
    }
    return std::nullopt;
}

// Modules with an adapter, by the name peft matches against (the "base_model.model." wrapper of a
// peft save removed) and whether that name is peft's: torchtune's own adapter_model.pt names its
// modules its own way (layers.0.attn.q_proj.lora_a.weight), which neither target_modules nor
// the HF-named base weights use.
std::map<std::string, LoraPair> loraPairs(const ModelPart& model, bool& peftNames)
{
    static const std::regex lora(R"(^(.*)\.(lora_A|lora_B|lora_a|lora_b)(?:\.[^.]+)?\.weight$|^(.*)\.(lora_embedding_A|lora_embedding_B)(?:\.[^.]+)?$)");
    std::map<std::string, LoraPair> pairs;
    peftNames = false;
    for (const auto& p : model.parameters) {
        // Both patterns need "lora_": the substring test spares std::regex's backtracking on the
        // ~90k names of a frontier model without an adapter (it was 7% of `ckpt show`).
        if (p.name.find("lora_") == std::string::npos)
            continue;
        std::smatch m;
        if (!std::regex_match(p.name, m, lora))
            continue;
        std::string module = m[1].matched ? m[1].str() : m[3].str();
        const std::string kind = m[2].matched ? m[2].str() : m[4].str();
        if (module.starts_with("base_model.model.")) {
            module.erase(0, std::string("base_model.model.").size());
            peftNames = true;
        }
        LoraPair& pair = pairs[module];
        (kind.back() == 'A' || kind.back() == 'a' ? pair.a : pair.b) = &p;
    }
    return pairs;
}

// The rank peft builds `module` with: the first rank_pattern key that matches it, else `r`. The
// JSON is read back in key order, not the file's, so when several keys match, each of their ranks
// is one peft might have taken.
struct ExpectedRank {
    std::vector<int64_t> ranks;
    std::string source;
};

ExpectedRank expectedRank(const nlohmann::json& config, const std::string& module)
{
    ExpectedRank out;
    const auto patterns = config.find("rank_pattern");
    if (patterns != config.end() && patterns->is_object()) {
        for (const auto& [key, value] : patterns->items()) {
            try {
                if (value.is_number_integer() && std::regex_match(module, std::regex("(.*\\.)?(" + key + ")"))) {
                    out.ranks.push_back(value.get<int64_t>());
                    out.source += (out.source.empty() ? "" : ", ") + std::string("rank_pattern[\"") + key + "\"]";
                }
            } catch (const std::regex_error&) {
                // a pattern std::regex cannot read: fall back to r, as for an unmatched module
            }
        }
    }
    if (out.ranks.empty()) {
        const auto r = config.find("r");
        if (r != config.end() && r->is_number_integer())
            out.ranks.push_back(r->get<int64_t>());
        out.source = "r";
    }
    return out;
}

// Whether peft would put an adapter on `module`; nullopt when the config's form cannot be judged
// here ("all-linear" depends on the model's classes, target_parameters adapts parameters).
std::optional<bool> targeted(const nlohmann::json& config, const std::string& module)
{
    const auto params = config.find("target_parameters");
    if (params != config.end() && params->is_array() && !params->empty())
        return std::nullopt;
    const auto targets = config.find("target_modules");
    if (targets == config.end() || targets->is_null())
        return std::nullopt;
    if (targets->is_string()) {
        const std::string t = targets->get<std::string>();
        if (t == "all-linear")
            return std::nullopt;
        try {
            return std::regex_match(module, std::regex(t));
        } catch (const std::regex_error&) {
            return std::nullopt;
        }
    }
    if (!targets->is_array())
        return std::nullopt;
    for (const auto& t : *targets) {
        if (t.is_string() && (module == t.get<std::string>() || module.ends_with("." + t.get<std::string>())))
            return true;
    }
    return false;
}

std::string configValue(const nlohmann::json& config, const char* key)
{
    const auto it = config.find(key);
    return it == config.end() ? std::string("(absent)") : it->dump();
}

} // namespace

void adapterRules(const CheckpointFacts& c, Findings& out)
{
    const TrainingState& s = c.state;
    if (!s.model)
        return;
    bool peftNames = false;
    const std::map<std::string, LoraPair> pairs = loraPairs(*s.model, peftNames);
    if (pairs.empty())
        return;
    const std::optional<AdapterConfig> config = adapterConfig(s);
    const bool lora = config && config->json.value("peft_type", std::string("LORA")) == "LORA";
    std::map<std::string, const ParameterEntry*> byName;
    for (const auto& p : s.model->parameters)
        byName.emplace(p.name, &p);
    // One finding per kind of disagreement: the first module's evidence, and how many share it.
    struct Disagreement {
        std::string message;
        std::vector<Evidence> evidence;
        int modules = 0;
    };
    std::map<int, Disagreement> kinds; // 0: A and B disagree, 1: rank against the config, 2: against the base weight
    auto disagrees = [&](int kind, std::string message, std::vector<Evidence> evidence) {
        Disagreement& d = kinds[kind];
        if (d.modules++ == 0) {
            d.message = std::move(message);
            d.evidence = std::move(evidence);
        }
    };
    std::vector<std::string> untargeted;
    for (const auto& [module, pair] : pairs) {
        if (!pair.a || !pair.b || pair.a->shape.size() < 2 || pair.b->shape.size() < 2)
            continue;
        const int64_t rankA = pair.a->shape[0], rankB = pair.b->shape[1];
        if (rankA != rankB) {
            disagrees(0, module + ": lora_A has rank " + std::to_string(rankA) + " but lora_B has rank " + std::to_string(rankB)
                          + ", so their product cannot be formed",
                      {evidence(pair.a->name + " shape", shapeText(pair.a->shape), pair.a->from),
                       evidence(pair.b->name + " shape", shapeText(pair.b->shape), pair.b->from)});
            continue;
        }
        if (lora && peftNames) {
            const ExpectedRank expected = expectedRank(config->json, module);
            if (!expected.ranks.empty() && std::find(expected.ranks.begin(), expected.ranks.end(), rankA) == expected.ranks.end())
                disagrees(1, module + ": the adapter's weights have rank " + std::to_string(rankA) + " but adapter_config.json's "
                              + expected.source + " builds it with rank " + std::to_string(expected.ranks.front()),
                          {evidence(pair.a->name + " shape", shapeText(pair.a->shape), pair.a->from),
                           evidence("adapter_config " + expected.source, std::to_string(expected.ranks.front()), {config->path, {}})});
            if (targeted(config->json, module) == false)
                untargeted.push_back(module);
        }
        // The base weight the pair adds to (a merged or base model saved in the same folder, in the
        // names peft strips its wrapper to): [out, in], or [in, out] for GPT-2's Conv1D (fan_in_fan_out).
        const auto base = peftNames && pair.a->name.ends_with(".weight") ? byName.find(module + ".weight") : byName.end();
        if (base == byName.end() || base->second->shape.size() != 2 || pair.a->shape.size() != 2 || pair.b->shape.size() != 2)
            continue;
        const std::vector<int64_t>& w = base->second->shape;
        const int64_t in = pair.a->shape[1], outDim = pair.b->shape[0];
        if (!((w[0] == outDim && w[1] == in) || (w[0] == in && w[1] == outDim)))
            disagrees(2, module + ": the adapter maps " + std::to_string(in) + " inputs to " + std::to_string(outDim)
                          + " outputs but the base weight beside it is " + shapeText(w),
                      {evidence(pair.a->name + " shape", shapeText(pair.a->shape), pair.a->from),
                       evidence(pair.b->name + " shape", shapeText(pair.b->shape), pair.b->from),
                       evidence(base->second->name + " shape", shapeText(w), base->second->from)});
    }
    for (auto& [kind, d] : kinds) {
        if (d.modules > 1)
            d.message += " (and " + std::to_string(d.modules - 1) + " more adapted module(s) alike)";
        Finding f = makeFinding("model.adapter-disagrees", std::move(d.message),
            hintWithNext("The adapter's weights were saved for another configuration or base model: an adapter_config.json "
                         "edited or copied after training, a rank_pattern lost, or the adapter trained on a different "
                         "checkpoint. peft rebuilds the adapter from the config and refuses weights of another shape "
                         "(recovery guide §2.1 on what model state holds, §9.2 on building and loading).", Component::Model));
        f.evidence = std::move(d.evidence);
        out.push_back(std::move(f));
    }
    if (!untargeted.empty()) {
        Finding f = makeFinding("model.adapter-untargeted",
            std::to_string(untargeted.size()) + " adapted module(s) that adapter_config.json's target_modules does not select, "
                "first " + untargeted.front() + ": loading the adapter leaves their weights out",
            hintWithNext("peft builds adapters only on the modules target_modules selects and loads the saved weights with "
                         "strict=False, so weights of other modules are dropped (with a warning), and those modules run "
                         "without their trained adapter (recovery guide §9.2 on building and loading).", Component::Model));
        f.evidence.push_back(evidence("adapter_config target_modules", configValue(config->json, "target_modules"), {config->path, {std::string("target_modules")}}));
        f.evidence.push_back(evidence("weights of", untargeted.front(), pairs.at(untargeted.front()).a->from));
        f.assumes = "the adapter is loaded by peft into a model built from this adapter_config.json (exclude_modules and "
                    "layers_to_transform only narrow the selection further)";
        out.push_back(std::move(f));
    }
}

} // namespace ckpt::rules
