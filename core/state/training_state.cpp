// SPDX-License-Identifier: MIT
// readTrainingState and the order in which StateReader reads a checkpoint: the files it opens,
// the JSON sidecars (manifest, trainer_state), what a single file turns out to be, and the
// global step agreed at the end. Each part's reading is in state_reader_parts.cpp.
#include "ckpt/state/training_state.h"
#include "state_reader.h"

#include "ckpt/formats/python_json.h"
#include "ckpt/formats/tokenizer_json.h"
#include "ckpt/formats/yaml_json.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/read_only_file.h"
#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/state/state_values.h"
#include "state_structure.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

namespace ckpt {
namespace detail {

StateReader::StateReader(TrainingState& state) : m_state(state) {}

void StateReader::read()
{
    // The adapter that recognised the checkpoint said how its state is stored.
    switch (m_state.layout.storage) {
    case StateStorage::Dcp:
        readDcp();
        settleGlobalStep();
        return;
    case StateStorage::MegatronDistributed:
        readMegatronDist();
        readJsonSidecars();
        readNamedFacts();
        settleGlobalStep();
        return;
    case StateStorage::ModelParallelFiles:
        // Files of tensor x pipeline parallel ranks: Megatron-LM's mp_rank_TT_PPP folders, NeMo 1.x's
        // mp_rank_TT copies of one .ckpt, a .nemo's per-rank model_weights.ckpt.
        readMegatron();
        readJsonSidecars();
        noteLayoutWarnings();
        readNamedFacts();
        settleGlobalStep();
        return;
    case StateStorage::Files:
        break;
    }
    openFiles();
    readJsonSidecars();
    refineSingleFileLayout();
    // The base weights first, so W's provenance is theirs; a LoRA adapter's parameters join them.
    for (auto& f : m_files) {
        if (f.info.role != "adapter")
            readModel(f);
    }
    for (auto& f : m_files) {
        if (f.info.role == "adapter")
            readModel(f);
    }
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
    readTransformersSchedule();
    for (auto& f : m_files)
        readMegatronExtras(f);
    mapOptimizerNames();
    noteLayoutWarnings();
    readNamedFacts();
    settleGlobalStep();
}

// What recognition could not do (a .nemo whose members cannot be listed), said instead of shown as absent.
void StateReader::noteLayoutWarnings()
{
    for (const std::string& w : m_state.layout.warnings)
        m_state.warnings.push_back(w);
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
    const std::string name = std::filesystem::path(info.path).filename().string();
    const bool yaml = name.ends_with(".yaml") || name.ends_with(".yml");
    nlohmann::json j;
    try {
        const std::string text = readBoundedFile(info.path, kSidecarJsonLimit);
        j = yaml ? parseYaml(text) : parsePythonJson(text);
    } catch (const std::exception& e) {
        m_state.warnings.push_back(info.path + ": not read as a model configuration (" + e.what() + ")");
        return;
    }
    readConfigFacts(j, info.path, {});
}

// The facts of a configuration (a config.json, a YAML config, a pickled hyper_parameters) under one
// name each, `base` the key path of `j` in its file.
void StateReader::readConfigFacts(const nlohmann::json& j, const std::string& path, const KeyPath& base)
{
    static const std::vector<std::pair<const char*, std::vector<const char*>>> facts = {
        {"architectures", {"architectures"}},
        {"model_type", {"model_type"}},
        {"torch_dtype", {"torch_dtype", "dtype", "precision"}}, // NeMo's and Lightning's precision: 16, bf16, bf16-mixed
        {"vocab_size", {"vocab_size", "padded_vocab_size"}},
        {"hidden_size", {"hidden_size", "n_embd", "d_model", "dim"}},
        {"num_hidden_layers", {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}},
        {"num_nextn_predict_layers", {"num_nextn_predict_layers"}}, // DeepSeek-V3's multi-token prediction layers
        {"num_attention_heads", {"num_attention_heads", "n_head", "n_heads"}},
        {"num_key_value_heads", {"num_key_value_heads", "n_kv_heads", "num_query_groups"}},
        {"intermediate_size", {"intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"}},
        {"max_position_embeddings", {"max_position_embeddings", "n_positions", "max_seq_len", "encoder_seq_length"}},
        {"tie_word_embeddings", {"tie_word_embeddings", "share_embeddings_and_output_weights"}},
        {"tensor_model_parallel_size", {"tensor_model_parallel_size"}},
        {"pipeline_model_parallel_size", {"pipeline_model_parallel_size"}},
        {"transformers_version", {"transformers_version"}},
        {"peft_type", {"peft_type"}},
        {"lora_r", {"r"}},
        {"lora_alpha", {"lora_alpha"}},
        {"lora_target_modules", {"target_modules"}},
        {"base_model", {"base_model_name_or_path"}},
    };
    // The facts sit at the top of config.json and of NeMo 1.x's model_config.yaml; a Lightning
    // hparams.yaml keeps the model's under `cfg` (NeMo's ModelPT saves its whole cfg as the
    // hyperparameter), NeMo 2.0's context/model.yaml under `config` (the serialized
    // GPTConfig the model was built from). The first level that names any fact is read.
    KeyPath at = base;
    const nlohmann::json* level = &j;
    auto namesFact = [&](const nlohmann::json& o) {
        for (const auto& [fact, keys] : facts) {
            for (const char* key : keys) {
                if (o.contains(key) && std::string_view(fact) != "torch_dtype")
                    return true;
            }
        }
        return false;
    };
    for (const std::vector<const char*>& nesting : std::vector<std::vector<const char*>>{{}, {"cfg"}, {"model"}, {"config"}, {"cfg", "model"}, {"model", "config"}}) {
        const nlohmann::json* o = &j;
        for (const char* k : nesting)
            o = o->is_object() && o->contains(k) ? &(*o)[k] : nullptr;
        if (o && o->is_object() && namesFact(*o)) {
            level = o;
            for (const char* k : nesting)
                at.emplace_back(std::string(k));
            break;
        }
    }
    if (!level->is_object())
        return;
    for (const auto& [fact, keys] : facts) {
        for (const char* key : keys) {
            const auto it = level->find(key);
            if (it == level->end() || it->is_null())
                continue;
            std::string text;
            if (it->is_array()) {
                for (const auto& a : *it)
                    text += (text.empty() ? "" : ", ") + (a.is_string() ? a.get<std::string>() : a.dump());
            } else if (it->is_primitive()) {
                text = it->is_string() ? it->get<std::string>() : it->dump();
            }
            if (!text.empty()) {
                KeyPath where = at;
                where.emplace_back(std::string(key));
                field(m_state.environment, std::string("config.") + fact, text, {path, std::move(where)});
                break;
            }
        }
    }
}

// E from the tokenizer and generation settings saved beside the model: the ids the tokenizer can
// produce (tokenizer.json's vocabulary and added tokens, tokenizer_config.json's
// added_tokens_decoder) and the special token ids generation uses (generation_config.json), which
// the token embedding must have rows for.
void StateReader::readTokenizerFiles(const LayoutFile& info)
{
    const std::string name = std::filesystem::path(info.path).filename().string();
    try {
        if (name == "tokenizer.json" || name == "tokenizer_config.json") {
            const std::string text = readBoundedFile(info.path, kSidecarJsonLimit);
            const TokenizerIds ids = name == "tokenizer.json" ? tokenizerJsonIds(text) : tokenizerConfigIds(text);
            const KeyPath key = name == "tokenizer.json" ? KeyPath{std::string("model"), std::string("vocab")} : KeyPath{std::string("added_tokens_decoder")};
            if (ids.maxId)
                field(m_state.environment, "tokenizer.ids", std::to_string(*ids.maxId + 1), {info.path, key});
            if (!ids.modelType.empty())
                field(m_state.environment, "tokenizer.model", ids.modelType, {info.path, {std::string("model"), std::string("type")}});
        } else if (name == "generation_config.json") {
            const nlohmann::json j = parsePythonJson(readBoundedFile(info.path, kSidecarJsonLimit));
            for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id"}) {
                const auto it = j.find(key);
                if (it != j.end() && (it->is_number_integer() || it->is_array()))
                    field(m_state.environment, std::string("generation.") + key, it->dump(), {info.path, {std::string(key)}});
            }
        }
    } catch (const std::exception& e) {
        m_state.warnings.push_back(info.path + ": not read (" + e.what() + ")");
    }
}

void StateReader::readJsonSidecars()
{
    for (const auto& info : m_state.layout.files) {
        const std::string name = std::filesystem::path(info.path).filename().string();
        if (info.role == "config"
            && (name == "config.json" || name == "params.json" || name == "adapter_config.json" || name.ends_with(".yaml") || name.ends_with(".yml")))
            readModelConfig(info);
        if (info.role == "config")
            readTokenizerFiles(info);
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
    if (!layout.refineByContent)
        return;
    if (m_files.size() != 1)
        return;
    const CheckpointFile& f = *m_files.front().file;
    const ValueGraph& g = f.graph();
    const NodeId root = f.root();
    // The adapters recognise a framework's single file by its top-level keys (framework_registry.h).
    if (auto claimed = recogniseContent(ContentProbe{g, root, stateDictScore(g, root)})) {
        layout.layout = claimed->first;
        layout.recognisedBy = std::move(claimed->second);
    }
}

// Counters a framework keeps only in file names (NeMo's consumed_samples, accelerate's process count):
// its adapter reads them (framework_adapter.h factsFromNames).
void StateReader::readNamedFacts()
{
    for (const NamedFact& f : frameworkOf(m_state.layout.layout).factsFromNames(m_state.layout)) {
        auto& part = f.part == "data" ? m_state.data : f.part == "progress" ? m_state.progress : m_state.environment;
        field(part, f.name, f.value, {m_state.layout.path, {f.where}});
    }
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
    m_state.globalStepFromName = m_state.globalStep.has_value();
}

} // namespace detail

std::shared_ptr<const CheckpointFile> TrainingState::keptFile(const std::string& path) const
{
    for (const auto& f : files) {
        if (f && f->path() == path)
            return f;
    }
    return nullptr;
}

const StateField* TrainingState::progressField(const std::string& name) const
{
    for (const auto& f : progress) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

std::vector<std::shared_ptr<const CheckpointFile>> detail::StateReader::openedFiles() const
{
    std::vector<std::shared_ptr<const CheckpointFile>> files;
    for (const detail::Opened& f : m_files)
        files.push_back(f.file);
    return files;
}

TrainingState readTrainingState(const std::string& path, const ReadOptions& options)
{
    TrainingState state;
    state.path = path;
    state.layout = detectLayout(path);
    detail::StateReader reader(state);
    reader.read();
    if (options.keepFiles)
        state.files = reader.openedFiles();
    return state;
}

} // namespace ckpt
