// SPDX-License-Identifier: MIT
// readTrainingState and the order in which StateReader reads a checkpoint: the files it opens,
// the JSON sidecars (manifest, trainer_state), what a single file turns out to be, and the
// global step agreed at the end. Each part's reading is in state_reader_parts.cpp.
#include "ckpt/state/training_state.h"
#include "state_reader.h"

#include "ckpt/formats/python_json.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/read_only_file.h"
#include "state_structure.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace ckpt {
namespace detail {

StateReader::StateReader(TrainingState& state) : m_state(state) {}

void StateReader::read()
{
    if (m_state.layout.layout == Layout::Dcp) {
        readDcp();
        settleGlobalStep();
        return;
    }
    if (m_state.layout.layout == Layout::Megatron) {
        readMegatron();
        settleGlobalStep();
        return;
    }
    openFiles();
    readJsonSidecars();
    refineSingleFileLayout();
    for (auto& f : m_files)
        readModel(f);
    readZero();
    for (auto& f : m_files)
        readOptimizer(f);
    for (auto& f : m_files)
        readScheduler(f);
    for (auto& f : m_files)
        readScaler(f);
    for (auto& f : m_files)
        readRng(f);
    for (auto& f : m_files)
        readCounters(f);
    for (auto& f : m_files)
        readMegatronExtras(f);
    mapOptimizerNames();
    settleGlobalStep();
}

void StateReader::openFiles()
{
    for (const auto& info : m_state.layout.files) {
        if (!opensAsCheckpointFile(info))
            continue;
        try {
            m_files.push_back({info, CheckpointFile::open(info.path)});
        } catch (const OpenError& e) {
            m_state.warnings.push_back(e.what());
        }
    }
}

void StateReader::field(std::vector<StateField>& into, const std::string& name, const std::string& value, Provenance from)
{
    if (value.empty())
        return;
    into.push_back({name, value, std::move(from)});
}

// E from the model's configuration: transformers' PretrainedConfig.to_json_file (config.json),
// Meta's params.json (torchtune, llama), peft's adapter_config.json. The facts a user checks
// first, under one name whatever the architecture spells them (GPT-2's n_layer and n_embd,
// T5's d_model, Meta's dim and n_layers); the provenance keeps the file's own key.
void StateReader::readModelConfig(const LayoutFile& info)
{
    static const std::vector<std::pair<const char*, std::vector<const char*>>> facts = {
        {"architectures", {"architectures"}},
        {"model_type", {"model_type"}},
        {"torch_dtype", {"torch_dtype", "dtype"}},
        {"vocab_size", {"vocab_size", "padded_vocab_size"}},
        {"hidden_size", {"hidden_size", "n_embd", "d_model", "dim"}},
        {"num_hidden_layers", {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}},
        {"num_nextn_predict_layers", {"num_nextn_predict_layers"}}, // DeepSeek-V3's multi-token prediction layers
        {"num_attention_heads", {"num_attention_heads", "n_head", "n_heads"}},
        {"num_key_value_heads", {"num_key_value_heads", "n_kv_heads"}},
        {"intermediate_size", {"intermediate_size", "n_inner", "ffn_dim"}},
        {"max_position_embeddings", {"max_position_embeddings", "n_positions", "max_seq_len"}},
        {"tie_word_embeddings", {"tie_word_embeddings"}},
        {"transformers_version", {"transformers_version"}},
        {"peft_type", {"peft_type"}},
        {"lora_r", {"r"}},
        {"base_model", {"base_model_name_or_path"}},
    };
    nlohmann::json j;
    try {
        j = parsePythonJson(readBoundedFile(info.path, kSidecarJsonLimit));
    } catch (const std::exception& e) {
        m_state.warnings.push_back(info.path + ": not read as a model configuration (" + e.what() + ")");
        return;
    }
    if (!j.is_object())
        return;
    for (const auto& [name, keys] : facts) {
        for (const char* key : keys) {
            const auto it = j.find(key);
            if (it == j.end() || it->is_null())
                continue;
            std::string text;
            if (it->is_array()) {
                for (const auto& a : *it)
                    text += (text.empty() ? "" : ", ") + (a.is_string() ? a.get<std::string>() : a.dump());
            } else if (it->is_primitive()) {
                text = it->is_string() ? it->get<std::string>() : it->dump();
            }
            if (!text.empty()) {
                field(m_state.environment, std::string("config.") + name, text, {info.path, {std::string(key)}});
                break;
            }
        }
    }
}

void StateReader::readJsonSidecars()
{
    for (const auto& info : m_state.layout.files) {
        const std::string name = std::filesystem::path(info.path).filename().string();
        if (info.role == "config" && (name == "config.json" || name == "params.json" || name == "adapter_config.json"))
            readModelConfig(info);
        if (info.role != "manifest" && info.role != "trainer_state")
            continue;
        nlohmann::json j;
        try {
            j = parsePythonJson(readBoundedFile(info.path, kSidecarJsonLimit));
        } catch (const FormatError& e) {
            m_state.warnings.push_back(info.path + ": " + e.what() + "; not read");
            continue;
        } catch (const std::exception& e) {
            m_state.warnings.push_back(info.path + ": not valid JSON (" + e.what() + ")");
            continue;
        }
        if (!j.is_object())
            continue;
        for (const auto& [k, v] : j.items()) {
            if (k == "data" && v.is_object() && info.role == "manifest") {
                // the recovery guide's manifest may describe the data: batches per epoch, sampler seed
                for (const auto& [dk, dv] : v.items()) {
                    if (dv.is_primitive())
                        field(m_state.data, "data." + dk, dv.is_string() ? dv.get<std::string>() : dv.dump(), {info.path, {k, dk}});
                }
                continue;
            }
            if (!(v.is_primitive()))
                continue;
            const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
            const Provenance from{info.path, {k}};
            if (k == "global_step" || k == "epoch" || k == "max_steps")
                field(m_state.progress, k, text, from);
            else if (k == "log_history" || k == "files")
                continue;
            else
                field(m_state.environment, k, text, from);
        }
    }
}

void StateReader::refineSingleFileLayout()
{
    CheckpointLayout& layout = m_state.layout;
    if (layout.layout != Layout::Generic && layout.layout != Layout::Lightning)
        return;
    if (m_files.size() != 1)
        return;
    const CheckpointFile& f = *m_files.front().file;
    const ValueGraph& g = f.graph();
    const NodeId root = f.root();
    auto has = [&](const char* k) { return g.get(root, k) != kNoNode; };
    if (has("pytorch-lightning_version") || (has("state_dict") && has("optimizer_states")))
        layout.layout = Layout::Lightning;
    else if (has("module") && (has("ds_version") || has("global_steps")))
        layout.layout = Layout::DeepSpeed;
    else if (has("model") && has("optimizer") && (has("global_step") || has("batch_pos")))
        layout.layout = Layout::RecoveryGuideFile;
    else if (stateDictScore(g, root) > 0)
        layout.layout = Layout::StateDict;
}

void StateReader::settleGlobalStep()
{
    // torchtitan keeps its train step in train_state (torchtitan@970fbddb trainer.py state_dict:
    // {"step", "ntokens_seen"}), the last completed step, as N in step-N.
    // fairseq's optimizer_history[-1].num_updates and Composer's Timestamp batch count optimizer
    // updates too (readFrameworkCounters).
    for (const char* name : {"global_step", "global_steps", "step", "iteration", "iter", "train_state.step", "num_updates", "timestamp.batch", "steps_run"}) {
        if (const StateField* f = m_state.progressField(name)) {
            try {
                m_state.globalStep = std::stoll(f->value);
                return;
            } catch (const std::exception&) {
            }
        }
    }
    m_state.globalStep = m_state.layout.stepFromName;
}

} // namespace detail

const StateField* TrainingState::progressField(const std::string& name) const
{
    for (const auto& f : progress) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

TrainingState readTrainingState(const std::string& path)
{
    TrainingState state;
    state.path = path;
    state.layout = detectLayout(path);
    detail::StateReader(state).read();
    return state;
}

} // namespace ckpt
