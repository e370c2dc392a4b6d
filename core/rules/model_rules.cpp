// SPDX-License-Identifier: MIT
// Model state W_t (recovery guide §2.1): a training checkpoint carries the weights. Content rules
// (NaN/Inf) are in content_rules.cpp, pair rules (keys, shapes) in structure_pair_rules.cpp.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>

namespace ckpt::rules {
namespace {

const StateField* configField(const TrainingState& s, const char* name)
{
    return findField(s.environment, std::string("config.") + name);
}

// The transformer blocks the weights hold: the indices after one stack prefix ("model.layers.3.",
// "transformer.h.3."). Several stacks (an encoder and a decoder, a vision tower beside the
// language model) are not one count a config's num_hidden_layers describes: nullopt.
struct LayerStack {
    std::string prefix;
    std::set<int64_t> indices;
    const ParameterEntry* sample = nullptr;
};

/// The stack a parameter name sits in: the shortest prefix of whole components followed by a stack
/// name ("layers", "h", "layer", "blocks", "block") and a block index, which another component
/// follows ("model.layers.3.mlp.w" → {"model.layers", 3}). Read by hand, not with std::regex:
/// the regex search cost 45 ms on a 90k-tensor model, and std::stoll threw on an index of 20 digits.
std::optional<std::pair<std::string_view, int64_t>> stackOf(std::string_view name)
{
    static constexpr std::string_view kStackNames[] = {"layers", "h", "layer", "blocks", "block"};
    std::size_t start = 0; // of the current component
    while (start < name.size()) {
        const std::size_t dot = name.find('.', start);
        if (dot == std::string_view::npos)
            return std::nullopt;
        const std::string_view component = name.substr(start, dot - start);
        if (component.find_first_of("\n\r") != std::string_view::npos)
            return std::nullopt; // the prefix is a line of a name, not a module path
        const std::size_t digitsEnd = name.find('.', dot + 1);
        if (std::find(std::begin(kStackNames), std::end(kStackNames), component) != std::end(kStackNames)
            && digitsEnd != std::string_view::npos && digitsEnd > dot + 1) {
            const std::string_view digits = name.substr(dot + 1, digitsEnd - dot - 1);
            if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                int64_t index = 0;
                if (std::from_chars(digits.data(), digits.data() + digits.size(), index).ec != std::errc())
                    return std::nullopt; // too many digits for a block index
                return std::pair{name.substr(0, dot), index};
            }
        }
        start = dot + 1;
    }
    return std::nullopt;
}

std::optional<LayerStack> layerStack(const ModelPart& model)
{
    std::map<std::string, LayerStack, std::less<>> stacks;
    for (const auto& p : model.parameters) {
        const auto stack = stackOf(p.name);
        if (!stack)
            continue;
        auto it = stacks.find(stack->first);
        if (it == stacks.end()) {
            it = stacks.emplace(std::string(stack->first), LayerStack{}).first;
            it->second.prefix = stack->first;
            it->second.sample = &p;
        }
        it->second.indices.insert(stack->second);
    }
    if (stacks.size() != 1)
        return std::nullopt;
    return stacks.begin()->second;
}

const ParameterEntry* tokenEmbedding(const ModelPart& model)
{
    for (const auto& p : model.parameters) {
        for (const char* suffix : {"embed_tokens.weight", "wte.weight", "word_embeddings.weight", "tok_embeddings.weight"}) {
            if (p.name.ends_with(suffix) && p.shape.size() == 2)
                return &p;
        }
    }
    return nullptr;
}

// The ids the tokenizer and the generation settings beside the weights produce index the token
// embedding: an id at or past its rows reaches no embedding (an index error, on a GPU a device-side
// assert), the usual trace of tokens added without resize_token_embeddings.
void tokenizerRules(const TrainingState& s, const ParameterEntry& embed, Findings& out)
{
    const int64_t rows = embed.shape[0];
    std::vector<Evidence> beyond;
    std::string message;
    const std::string past = " past the " + std::to_string(rows) + " rows of the token embedding " + embed.name;
    for (const StateField* f : findFields(s.environment, "tokenizer.ids")) {
        if (const auto n = toNumber(f->value); n && static_cast<int64_t>(*n) > rows) {
            const std::string file = std::filesystem::path(f->from.file).filename().string();
            beyond.push_back(evidence("token ids of " + file, "0 .. " + std::to_string(static_cast<int64_t>(*n) - 1), f->from));
            if (message.empty())
                message = file + " produces token ids up to " + std::to_string(static_cast<int64_t>(*n) - 1) + "," + past;
        }
    }
    for (const auto& f : s.environment) {
        if (!f.name.starts_with("generation."))
            continue;
        // A single id or a list of ids ("[128001, 128008, 128009]").
        std::string digits;
        for (const char ch : f.value + " ") {
            if (ch >= '0' && ch <= '9') {
                digits += ch;
            } else if (!digits.empty()) {
                if (digits.size() > 18 || std::stoll(digits) >= rows) {
                    beyond.push_back(evidence(f.name.substr(11), f.value, f.from));
                    if (message.empty())
                        message = "generation_config.json's " + f.name.substr(11) + " " + f.value + " reaches" + past;
                    break;
                }
                digits.clear();
            }
        }
    }
    if (beyond.empty())
        return;
    Finding finding = makeFinding("model.tokenizer-disagrees", message,
        hintWithNext("Tokens were added to the tokenizer (special tokens, a chat template's markers) without "
                     "resize_token_embeddings, or the tokenizer of another model was saved beside these weights: the "
                     "ids past the embedding's rows cannot be embedded (recovery guide §9.1 on checking the tokenizer "
                     "before a resume).", Component::Model));
    finding.assumes = "token ids index the token embedding's rows directly, as transformers' model classes do (a model with "
                      "a separate table for added tokens, such as IDEFICS's decoupled embedding, does not)";
    finding.evidence = std::move(beyond);
    finding.evidence.push_back(evidence(embed.name + " shape", shapeText(embed.shape), embed.from));
    out.push_back(std::move(finding));
}

} // namespace

// W against the configuration saved beside it (E: config.json). transformers' from_pretrained builds
// the model from the config, then loads the weights into it (transformers
// src/transformers/modeling_utils.py _load_pretrained_model, read in the search corpus' stored copy,
// its commit not recorded: "size mismatch" is raised as a RuntimeError unless
// ignore_mismatched_sizes; a block the weights lack keeps its random initialisation, with a warning
// only), so weights that disagree with their own folder's config are proven not to load as saved.
void configRules(const CheckpointFacts& c, Findings& out)
{
    const TrainingState& s = c.state;
    if (!s.model || s.model->parameters.empty())
        return;
    auto disagree = [&](std::string message, const StateField& config, Evidence weights) {
        Finding f = makeFinding("model.config-disagrees", std::move(message),
            hintWithNext("The config.json beside the weights describes another model: a config copied from the base model "
                         "after the vocabulary was resized or layers pruned, or weights converted with another layout. "
                         "from_pretrained refuses the mismatched shapes or initialises the missing blocks at random "
                         "(recovery guide §2.1 on what model state holds, §9.2 on building and loading).", Component::Model));
        f.evidence.push_back(evidence("config " + config.name.substr(7), config.value, config.from));
        f.evidence.push_back(std::move(weights));
        out.push_back(std::move(f));
    };
    if (const StateField* layers = configField(s, "num_hidden_layers")) {
        const auto n = toNumber(layers->value);
        const auto stack = layerStack(*s.model);
        // DeepSeek-V3's checkpoints keep their multi-token-prediction layers after the decoder's, as
        // model.layers.<num_hidden_layers>... (config num_nextn_predict_layers): blocks the loader
        // expects too.
        const StateField* mtp = configField(s, "num_nextn_predict_layers");
        const int64_t extra = mtp && toNumber(mtp->value) ? static_cast<int64_t>(*toNumber(mtp->value)) : 0;
        const int64_t blocks = stack ? static_cast<int64_t>(stack->indices.size()) : 0;
        if (n && stack && blocks != static_cast<int64_t>(*n) && blocks != static_cast<int64_t>(*n) + extra) {
            disagree("the weights hold " + std::to_string(stack->indices.size()) + " block(s) of " + stack->prefix + " but the config says "
                         + layers->value + " layers",
                     *layers, evidence("blocks in the weights", std::to_string(stack->indices.size()) + " (" + stack->prefix + ".0 .. "
                                           + std::to_string(*stack->indices.rbegin()) + ")", stack->sample->from));
        }
    }
    const ParameterEntry* embed = tokenEmbedding(*s.model);
    if (!embed)
        return;
    if (const StateField* vocab = configField(s, "vocab_size"); vocab && toNumber(vocab->value)
        && embed->shape[0] != static_cast<int64_t>(*toNumber(vocab->value))) {
        disagree("the token embedding " + embed->name + " has " + std::to_string(embed->shape[0]) + " rows but the config's vocab_size is "
                     + vocab->value,
                 *vocab, evidence(embed->name + " shape", "[" + std::to_string(embed->shape[0]) + ", " + std::to_string(embed->shape[1]) + "]", embed->from));
    }
    tokenizerRules(s, *embed, out);
    if (const StateField* hidden = configField(s, "hidden_size"); hidden && toNumber(hidden->value)
        && embed->shape[1] != static_cast<int64_t>(*toNumber(hidden->value))) {
        disagree("the token embedding " + embed->name + " is " + std::to_string(embed->shape[1]) + " wide but the config's hidden_size is "
                     + hidden->value,
                 *hidden, evidence(embed->name + " shape", "[" + std::to_string(embed->shape[0]) + ", " + std::to_string(embed->shape[1]) + "]", embed->from));
    }
}

void modelRules(const CheckpointFacts& c, Findings& out)
{
    const TrainingState& s = c.state;
    if (s.model || (!s.optimizer && !s.scheduler))
        return;
    Finding f = makeFinding("model.missing", "no model state_dict in this checkpoint",
        "Optimizer/scheduler state alone cannot resume training; the weights must be saved in the same commit (recovery guide §2.1 on what model state holds besides parameters and §6.2 on atomic writes and commit markers).");
    f.evidence.push_back({"layout", layoutName(s.layout.layout), s.path});
    out.push_back(std::move(f));
}

} // namespace ckpt::rules
