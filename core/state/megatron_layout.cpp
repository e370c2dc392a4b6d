// SPDX-License-Identifier: MIT
#include "megatron_layout.h"

#include <regex>

namespace ckpt::detail {
namespace {

std::optional<int64_t> intField(const std::vector<StateField>& fields, const std::string& name)
{
    for (const auto& f : fields) {
        if (f.name != name)
            continue;
        try {
            std::size_t used = 0;
            const int64_t v = std::stoll(f.value, &used);
            return used == f.value.size() ? std::optional(v) : std::nullopt;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

bool flag(const std::vector<StateField>& fields, const std::string& name)
{
    for (const auto& f : fields) {
        if (f.name == name)
            return f.value == "True" || f.value == "true";
    }
    return false;
}

// Megatron-LM keeps the value in args, NeMo in its model config.
std::optional<int64_t> recorded(const std::vector<StateField>& env, const char* args, const char* config)
{
    if (auto v = intField(env, std::string("args.") + args))
        return v;
    return config ? intField(env, std::string("config.") + config) : std::nullopt;
}

} // namespace

MegatronShape megatronShape(const std::vector<StateField>& env, int tpFolders, int ppFolders, int epFolders)
{
    MegatronShape s;
    const auto tp = recorded(env, "tensor_model_parallel_size", "tensor_model_parallel_size");
    const auto pp = recorded(env, "pipeline_model_parallel_size", "pipeline_model_parallel_size");
    const auto ep = recorded(env, "expert_model_parallel_size", nullptr);
    const auto vp = recorded(env, "virtual_pipeline_model_parallel_size", nullptr);
    s.recorded = tp.has_value() || pp.has_value();
    s.tp = static_cast<int>(tp.value_or(tpFolders));
    s.pp = static_cast<int>(pp.value_or(ppFolders));
    s.ep = static_cast<int>(ep.value_or(epFolders));
    s.vp = static_cast<int>(vp.value_or(1));
    s.numLayers = recorded(env, "num_layers", "num_hidden_layers");
    s.firstStageLayers = recorded(env, "decoder_first_pipeline_num_layers", nullptr);
    s.lastStageLayers = recorded(env, "decoder_last_pipeline_num_layers", nullptr);
    s.numExperts = recorded(env, "num_experts", nullptr);
    s.accountForEmbedding = flag(env, "args.account_for_embedding_in_pipeline_split");
    s.accountForLoss = flag(env, "args.account_for_loss_in_pipeline_split");
    for (const auto& f : env) {
        if (f.name == "args.pipeline_model_parallel_layout" && f.value != "None")
            s.customLayout = true;
    }
    return s;
}

// get_transformer_layer_offset (megatron/core/transformer/transformer_layer.py at d98e8a64), for the
// cases a checkpoint's args decide: uniform stages, uneven first/last stages, virtual stages, and
// the embedding/loss layer counted in the split.
std::optional<int64_t> layerOffset(const MegatronShape& s, int pp, int v)
{
    if (s.pp <= 1 && s.vp <= 1)
        return 0;
    if (s.customLayout || !s.numLayers)
        return std::nullopt;
    const int64_t L = *s.numLayers, PP = s.pp, VP = s.vp;
    if (s.firstStageLayers || s.lastStageLayers) {
        const int64_t middleStages = PP - (s.firstStageLayers ? 1 : 0) - (s.lastStageLayers ? 1 : 0);
        const int64_t first = s.firstStageLayers.value_or(0), last = s.lastStageLayers.value_or(0);
        const int64_t middle = L - first - last;
        const int64_t middleRank = s.firstStageLayers ? pp - 1 : pp;
        if (VP > 1) {
            const int64_t fv = first / VP, lv = last / VP, mv = middle / VP;
            const int64_t total = fv + mv + lv;
            if (pp == 0)
                return v * total;
            return v * total + fv + middleRank * (middleStages > 0 ? mv / middleStages : 0);
        }
        if (pp == 0)
            return 0;
        return middleRank * (middleStages > 0 ? middle / middleStages : 0) + first;
    }
    int64_t layers = L + (s.accountForEmbedding ? 1 : 0) + (s.accountForLoss ? 1 : 0);
    const int64_t perRank = layers / PP;
    int64_t offset = 0;
    if (VP > 1)
        offset = v * (layers / VP) + pp * (perRank / VP);
    else
        offset = pp * perRank;
    if (s.accountForEmbedding && !(pp == 0 && v == 0))
        offset -= 1;
    return offset;
}

std::string globalLayerName(const std::string& name, int64_t offset)
{
    static const std::regex layer(R"(^((?:.*\.)?(?:decoder\.layers|layers)\.)(\d+)(\..*)$)");
    std::smatch m;
    if (offset == 0 || !std::regex_match(name, m, layer))
        return name;
    return m[1].str() + std::to_string(std::stoll(m[2].str()) + offset) + m[3].str();
}

bool isExpertTensor(const std::string& name)
{
    return name.find(".experts.") != std::string::npos && name.find("shared_experts") == std::string::npos;
}

std::string globalExpertName(const std::string& name, int ep, const MegatronShape& s)
{
    if (!s.numExperts || s.ep <= 0 || *s.numExperts % s.ep != 0 || !isExpertTensor(name))
        return name;
    const int64_t local = *s.numExperts / s.ep;
    static const std::regex sequential(R"(^(.*\.experts\.local_experts\.)(\d+)(\..*)$)");
    static const std::regex grouped(R"(^(.*\.experts\.linear_fc[12]\.(?:weight|bias))(\d+)$)");
    std::smatch m;
    if (std::regex_match(name, m, sequential))
        return m[1].str() + std::to_string(ep * local + std::stoll(m[2].str())) + m[3].str();
    if (std::regex_match(name, m, grouped))
        return m[1].str() + std::to_string(ep * local + std::stoll(m[2].str()));
    return name;
}

int splitDimension(const std::string& name)
{
    // Column-parallel linears and the vocab-parallel embedding split their output rows, row-parallel
    // linears their input columns (megatron-core names first, then megatron/model's); TEGroupedMLP's
    // per-expert weight<j> split like the linear they belong to. Layernorms, row-parallel biases and
    // position embeddings are replicated.
    static const std::regex rows(R"((linear_qkv|linear_fc1|query_key_value|dense_h_to_4h)\.(weight|bias)\d*$|(word_embeddings|output_layer)\.weight$)");
    static const std::regex columns(R"((linear_proj|linear_fc2|attention\.dense|dense_4h_to_h)\.weight\d*$)");
    if (std::regex_search(name, rows))
        return 0;
    if (std::regex_search(name, columns))
        return 1;
    return -1;
}

std::pair<int, std::string> splitChunkName(const std::string& name)
{
    static const std::regex chunk(R"(^model(\d+)\.(.*)$)");
    std::smatch m;
    if (std::regex_match(name, m, chunk))
        return {std::stoi(m[1].str()), m[2].str()};
    return {0, name};
}

} // namespace ckpt::detail
