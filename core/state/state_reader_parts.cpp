// SPDX-License-Identifier: MIT
// Each part of S_t read from one pickled file of a checkpoint: the model state_dict (W), the
// optimizer (O, DeepSpeed ZeRO partitions included), the LR scheduler (L), the AMP grad scaler
// (A), RNG states (R) and the counters, data cursor and configuration (C, D, E), each found at
// its usual key or, failing that, by its structure.
#include "state_reader.h"

#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/state/state_values.h"
#include "state_structure.h"
#include "zero_optimizer.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace ckpt::detail {
namespace {

// The one file a LoRA adapter is read from when a folder holds it twice: torchtune saves
// adapter_model.pt in its own names, which its recipes resume from and its optimizer state is keyed
// by, and a PEFT copy beside it (pytorch/torchtune@bd2a0fc7 torchtune/training/checkpointing/
// _checkpointer.py save_checkpoint). A peft save_pretrained folder has one file.
std::string adapterFile(const CheckpointLayout& layout)
{
    std::string chosen;
    for (const auto& f : layout.files) {
        if (f.role == "adapter" && (chosen.empty() || f.path.ends_with(".pt")))
            chosen = f.path;
    }
    return chosen;
}

} // namespace

void StateReader::readModel(Opened& f)
{
    // Several model files (shards of one state_dict) merge into one W; otherwise the first wins.
    // An adapter's parameters join W once (adapterFile).
    if (f.info.role == "adapter" && f.info.path != adapterFile(m_state.layout))
        return;
    if (m_state.model && f.info.role != "model" && f.info.role != "adapter")
        return;
    const ValueGraph& g = f.file->graph();
    const NodeId root = f.file->root();
    if (readModelChunks(f))
        return;
    Found found;
    for (const char* key : {"model", "state_dict", "module", "model_state_dict", "model_state"}) {
        const NodeId n = g.get(root, key);
        if (stateDictScore(g, n) > 0) {
            found = {n, {std::string(key)}};
            break;
        }
    }
    const bool weights = f.info.role == "model" || f.info.role == "adapter" || f.info.role == "state";
    if (found.node == kNoNode && weights && stateDictScore(g, root) > 0 && !isOptimizerDict(g, root))
        found = {root, {}};
    if (found.node == kNoNode && weights)
        found = findByStructure(g, root, [&](NodeId n) { return stateDictScore(g, n) > 0; }, 3);
    if (found.node == kNoNode)
        return;
    if (m_state.model && found.key.empty() && stateDictScore(g, found.node) == 0)
        return;
    ModelPart model = m_state.model ? std::move(*m_state.model) : ModelPart{};
    if (model.parameters.empty())
        model.from = {f.info.path, found.key};
    const FileFormat format = f.file->format();
    model.sortedNames = model.sortedNames || format == FileFormat::Safetensors || format == FileFormat::SafetensorsIndex;
    // A tied parameter is saved under each of its names, pointing at one storage view: each one
    // after the first of its view names that first one. Found by sorting the parameters by view
    // (stable, so the first of a view is the earliest), not through a map keyed by copies of
    // each shape and stride: 90k of those were a fifth of reading a frontier model's state.
    std::vector<std::pair<std::size_t, const TensorInfo*>> viewed; // parameter index, its tensor
    auto items = dictItems(g, found.node);
    if (const std::size_t need = model.parameters.size() + items.size(); need > model.parameters.capacity())
        model.parameters.reserve(std::max(need, 2 * model.parameters.capacity())); // shards merge one by one
    for (auto& [name, value] : items) {
        if (g[value].kind != Kind::Tensor)
            continue;
        const TensorInfo& t = f.file->tensors()[g[value].ref];
        KeyPath key;
        key.reserve(found.key.size() + 1);
        key = found.key;
        key.push_back(name);
        if (t.storage >= 0 && t.numel() > 0)
            viewed.emplace_back(model.parameters.size(), &t);
        model.parameters.push_back({std::move(name), t.dtypeName, t.shape, t.numel(), {f.info.path, std::move(key)}});
    }
    auto view = [](const TensorInfo* t) { return std::tie(t->storage, t->storageOffset, t->shape, t->stride); };
    std::stable_sort(viewed.begin(), viewed.end(), [&](const auto& a, const auto& b) { return view(a.second) < view(b.second); });
    for (std::size_t i = 1, head = 0; i < viewed.size(); ++i) {
        if (view(viewed[head].second) != view(viewed[i].second))
            head = i; // the first of the next view
        else
            model.parameters[viewed[i].first].tiedTo = model.parameters[viewed[head].first].name;
    }
    m_state.model = std::move(model);
}

// Megatron-LM with virtual pipeline stages saves one state_dict per model chunk, model0, model1...
// (NVIDIA/Megatron-LM@d98e8a64 megatron/training/checkpointing.py generate_state_dict), each numbering
// its layers from 0. W names them "model<v>.<name>", so the chunks stay apart until the merge over
// the ranks gives them global names (state_reader_megatron.cpp).
bool StateReader::readModelChunks(Opened& f)
{
    const ValueGraph& g = f.file->graph();
    const NodeId root = f.file->root();
    if (g.get(root, "model") != kNoNode || stateDictScore(g, g.get(root, "model0")) == 0)
        return false;
    ModelPart model;
    model.from = {f.info.path, {std::string("model0")}};
    for (int v = 0;; ++v) {
        const std::string key = "model" + std::to_string(v);
        const NodeId chunk = g.get(root, key);
        if (chunk == kNoNode)
            break;
        for (const auto& [name, value] : dictItems(g, chunk)) {
            if (g[value].kind != Kind::Tensor)
                continue;
            const TensorInfo& t = f.file->tensors()[g[value].ref];
            model.parameters.push_back({key + "." + name, t.dtypeName, t.shape, t.numel(), {f.info.path, {key, name}}});
        }
    }
    m_state.model = std::move(model);
    return true;
}

// ckpt_writer's save() records, beside the optimizer's state dict, the name of every parameter of
// every param group (`optimizer_param_names`, packaging/python/ckpt_writer.py): the same facts torch
// >= 2.6 keeps as each group's `param_names`, for any torch. Used when the groups carry no names of
// their own and the lists fit the groups exactly.
void StateReader::recordedParamNames(const ValueGraph& g, NodeId root, const Found& found, OptimizerPart& opt)
{
    if (found.key.size() != 1)
        return;
    const NodeId lists = g.get(root, "optimizer_param_names");
    if (!g.valid(lists) || g[lists].kind != Kind::List || g[lists].items.size() != opt.groups.size())
        return;
    std::vector<std::vector<std::string>> names;
    for (std::size_t gi = 0; gi < opt.groups.size(); ++gi) {
        const NodeId l = g[lists].items[gi];
        if ((g[l].kind != Kind::List && g[l].kind != Kind::Tuple) || g[l].items.size() != opt.groups[gi].params.size())
            return;
        auto& out = names.emplace_back();
        for (NodeId n : g[l].items) {
            if (g[n].kind != Kind::String)
                return;
            out.push_back(g[n].text);
        }
    }
    for (std::size_t gi = 0; gi < opt.groups.size(); ++gi) {
        if (opt.groups[gi].paramNames.empty())
            opt.groups[gi].paramNames = std::move(names[gi]);
    }
}

void StateReader::readOptimizer(Opened& f)
{
    if (m_state.optimizer)
        return;
    const ValueGraph& g = f.file->graph();
    const NodeId root = f.file->root();
    Found found;
    if (isOptimizerDict(g, root)) {
        found = {root, {}};
    } else {
        for (const char* key : {"optimizer", "optimizer_state_dict", "optimizer_state", "optim"}) {
            const NodeId n = g.get(root, key);
            if (isOptimizerDict(g, n)) {
                found = {n, {std::string(key)}};
                break;
            }
        }
    }
    if (found.node == kNoNode)
        found = findByStructure(g, root, [&](NodeId n) { return isOptimizerDict(g, n); }, 4, false);
    if (found.node == kNoNode) {
        // Megatron's distributed optimizer keeps only the inner optimizer's param_groups (their
        // `params` deleted) in model_optim_rng.pt; the state is in distrib_optim.pt
        // (NVIDIA/Megatron-LM@d98e8a64 megatron/core/optimizer/distrib_optimizer.py state_dict).
        const NodeId inner = g.get(g.get(root, "optimizer"), "optimizer");
        const NodeId groups = g.get(inner, "param_groups");
        if (g.valid(groups) && g[groups].kind == Kind::List && g.get(inner, "state") == kNoNode)
            found = {inner, {std::string("optimizer"), std::string("optimizer")}};
    }
    if (found.node == kNoNode)
        return;

    OptimizerPart opt;
    opt.from = {f.info.path, found.key};
    std::set<std::string> stateKeys, groupKeys;
    const NodeId groups = g.get(found.node, "param_groups");
    for (std::size_t gi = 0; gi < g[groups].items.size(); ++gi) {
        ParamGroup group;
        const NodeId gd = g[groups].items[gi];
        for (const auto& [k, v] : dictItems(g, gd)) {
            groupKeys.insert(k);
            KeyPath key = found.key;
            key.insert(key.end(), {std::string("param_groups"), static_cast<int64_t>(gi), k});
            if (k == "params") {
                for (NodeId p : g[v].items)
                    group.params.push_back(g[p].kind == Kind::String ? g[p].text : reprOf(g, p));
            } else if (k == "param_names" && (g[v].kind == Kind::List || g[v].kind == Kind::Tuple)) {
                for (NodeId p : g[v].items)
                    group.paramNames.push_back(g[p].kind == Kind::String ? g[p].text : reprOf(g, p));
            } else if (const std::string text = simpleText(*f.file, v); !text.empty()) {
                group.hyperparameters.push_back({k, text, {f.info.path, key}});
            }
        }
        opt.groups.push_back(std::move(group));
    }
    recordedParamNames(g, root, found, opt);
    const NodeId stateNode = g.get(found.node, "state");
    for (const auto& [index, perParam] : dictItems(g, stateNode)) {
        ParamState ps;
        ps.index = index;
        for (std::size_t gi = 0; gi < opt.groups.size(); ++gi) {
            if (std::find(opt.groups[gi].params.begin(), opt.groups[gi].params.end(), index) != opt.groups[gi].params.end())
                ps.group = static_cast<int>(gi);
        }
        for (const auto& [name, value] : dictItems(g, perParam)) {
            stateKeys.insert(name);
            KeyPath key = found.key;
            key.insert(key.end(), {std::string("state"), index, name});
            if (name == "step") {
                ps.step = scalarOf(*f.file, value);
            } else if (g[value].kind == Kind::Tensor) {
                const TensorInfo& t = f.file->tensors()[g[value].ref];
                ps.moments.push_back({name, t.dtypeName, t.shape, {f.info.path, key}});
            }
        }
        opt.paramState.push_back(std::move(ps));
    }
    opt.type = inferOptimizerType(stateKeys, groupKeys);
    m_state.optimizer = std::move(opt);
}

void StateReader::readScheduler(Opened& f)
{
    if (m_state.scheduler)
        return;
    const ValueGraph& g = f.file->graph();
    const NodeId root = f.file->root();
    Found found;
    if (f.info.role == "scheduler" && isSchedulerDict(g, root))
        found = {root, {}};
    for (const char* key : {"scheduler", "lr_scheduler", "lr_schedulers"}) {
        if (found.node != kNoNode)
            break;
        NodeId n = g.get(root, key);
        KeyPath path{std::string(key)};
        if (g.valid(n) && g[n].kind == Kind::List && !g[n].items.empty()) {
            n = g[n].items[0];
            path.push_back(int64_t(0));
        }
        if (isSchedulerDict(g, n))
            found = {n, path};
    }
    if (found.node == kNoNode)
        found = findByStructure(g, root, [&](NodeId n) { return isSchedulerDict(g, n); }, 3);
    if (found.node == kNoNode)
        return;
    auto schedule = readLrSchedule(g, found.node);
    if (!schedule)
        return;
    // DeepSpeed names the scheduler it built in the same file's ds_config (engine.py _save_checkpoint).
    if (schedule->kind == "DeepSpeed scheduler") {
        if (const NodeId type = g.get(g.get(g.get(root, "ds_config"), "scheduler"), "type"); g.valid(type) && g[type].kind == Kind::String)
            schedule->kind = "DeepSpeed " + g[type].text;
    }
    m_state.scheduler = SchedulerPart{std::move(*schedule), {f.info.path, found.key}};
}

void StateReader::readScaler(Opened& f)
{
    if (m_state.scaler)
        return;
    const ValueGraph& g = f.file->graph();
    const NodeId root = f.file->root();
    Found found;
    // accelerate's and the Trainer's scaler.pt is the bare state dict; a file merely named
    // scaler_*.pt may hold a whole checkpoint, so the root counts only when it is a scaler's dict.
    if (f.info.role == "scaler" && isDict(g, root) && (g[root].items.empty() || isScalerDict(g, root)))
        found = {root, {}};
    // Lightning 2.x keys its precision plugin's state by the plugin's class name (MixedPrecision);
    // 1.x wrote checkpoint["native_amp_scaling_state"], which 2.x still loads (Lightning@7f0c3436
    // src/lightning/pytorch/trainer/connectors/checkpoint_connector.py restore_precision_plugin_state).
    for (const char* key : {"scaler", "grad_scaler", "amp_scaling_state", "native_amp_scaling_state", "MixedPrecision",
                            "MixedPrecisionPlugin", "NativeMixedPrecisionPlugin"}) {
        if (found.node != kNoNode)
            break;
        if (const NodeId n = g.get(root, key); isDict(g, n))
            found = {n, {std::string(key)}};
    }
    if (found.node == kNoNode)
        found = findByStructure(g, root, [&](NodeId n) { return isScalerDict(g, n); }, 3);
    if (found.node == kNoNode)
        return;
    ScalerPart s;
    s.from = {f.info.path, found.key};
    s.enabled = !g[found.node].items.empty();
    auto num = [&](const char* k) { return scalarOf(*f.file, g.get(found.node, k)); };
    s.scale = num("scale");
    s.growthFactor = num("growth_factor");
    s.backoffFactor = num("backoff_factor");
    if (auto v = num("growth_interval"))
        s.growthInterval = static_cast<int64_t>(*v);
    if (auto v = num("_growth_tracker"))
        s.growthTracker = static_cast<int64_t>(*v);
    m_state.scaler = std::move(s);
}

void StateReader::readRng(Opened& f)
{
    std::vector<RngState> found = findRngStates(*f.file);
    if (found.empty())
        return;
    if (!m_state.rng)
        m_state.rng = RngPart{};
    int rank = f.info.rank;
    if (const NodeId r = f.file->graph().get(f.file->root(), "rank"); rank < 0 && r != kNoNode) {
        if (auto v = scalarOf(*f.file, r))
            rank = static_cast<int>(*v);
    }
    for (auto& s : found)
        m_state.rng->generators.push_back({std::move(s), rank, f.info.path});
}

void StateReader::readCounters(Opened& f)
{
    const auto& progressKeys = kProgressKeys;
    const auto& dataKeys = kDataKeys;
    const auto& envKeys = kEnvKeys;
    const ValueGraph& g = f.file->graph();
    const NodeId root = f.file->root();
    if (f.info.role == "data") {
        // accelerate's sampler.bin (a SeedableRandomSampler object: epoch, initial_seed) and
        // dl_state_dict.bin (StatefulDataLoader.state_dict(): _num_yielded, _sampler_iter_yielded...).
        const std::string stem = fileStem(f.info.path);
        for (const auto& [k, v] : fieldsOf(g, root)) {
            const std::string text = simpleText(*f.file, v);
            if (text != "None")
                field(m_state.data, stem + "." + k, text, {f.info.path, {k}});
        }
        return;
    }
    // Files of the user's own registered objects (accelerate's custom_checkpoint_<i>.pkl): what their
    // `step` or `epoch` means is the user's convention, so they are shown under the file's name and no
    // rule takes them for the run's counters.
    const FrameworkConventions& conventions = conventionsOf(m_state.layout.layout);
    if (conventions.userObjectFilePrefix && fileStem(f.info.path).starts_with(conventions.userObjectFilePrefix.value)) {
        const std::string stem = fileStem(f.info.path);
        for (const auto& [k, v] : fieldsOf(g, root)) {
            const std::string text = simpleText(*f.file, v);
            if (!text.empty() && text != "None")
                field(m_state.progress, stem + "." + k, text, {f.info.path, {k}});
        }
        return;
    }
    auto scan = [&](NodeId dict, const KeyPath& prefix) {
        for (const auto& [k, v] : dictItems(g, dict)) {
            // An RNG file's top-level "step" that is not the global step (accelerate's Accelerator.step)
            // is kept under the framework's name for it.
            const bool rngFileStep = k == "step" && conventions.rngFileStepName && prefix.empty() && f.info.role == "rng";
            // Only the known keys are read: a frontier model's state_dict has 90k entries, and reading
            // each one-element tensor's value (30k FP8 block scales) for nothing was a tenth of its state.
            if (!rngFileStep && !progressKeys.contains(k) && !dataKeys.contains(k) && !envKeys.contains(k))
                continue;
            KeyPath key = prefix;
            key.push_back(k);
            const Provenance from{f.info.path, key};
            if (dataKeys.contains(k) && isDict(g, v)) { // sampler: {"epoch", "position", "seed"}
                for (const auto& [sk, sv] : dictItems(g, v)) {
                    KeyPath sub = key;
                    sub.push_back(sk);
                    field(m_state.data, k + "." + sk, simpleText(*f.file, sv), {f.info.path, sub});
                }
                continue;
            }
            const std::string text = simpleText(*f.file, v);
            if (text.empty())
                continue;
            if (rngFileStep)
                field(m_state.progress, conventions.rngFileStepName.value, text, from);
            else if (progressKeys.contains(k))
                field(m_state.progress, k, text, from);
            else if (dataKeys.contains(k))
                field(m_state.data, k, text, from);
            else if (envKeys.contains(k))
                field(m_state.environment, k, text, from);
        }
    };
    scan(root, {});
    // Lightning: hyper-parameters are the run's configuration; the fit loop's progress
    // counters say how far the data and the optimizer got.
    if (const NodeId hp = g.get(root, "hyper_parameters"); hp != kNoNode) {
        // NeMo 1.x's ModelPT saves its whole model config as the one hyperparameter `cfg`, an omegaconf
        // DictConfig (NVIDIA/NeMo@8cfedd72 nemo/core/classes/modelPT.py hparams; docs/layouts.md §5):
        // the model's facts, like a config.json's. Other modules' hyperparameters are their own names.
        const nlohmann::json plain = plainJson(*f.file, hp);
        const auto cfg = plain.is_object() ? plain.find("cfg") : plain.end();
        if (cfg != plain.end() && cfg->is_object() && (cfg->contains("nemo_version") || cfg->contains("target"))) {
            readConfigFacts(plain, f.info.path, {std::string("hyper_parameters")});
            for (const char* k : {"target", "nemo_version", "global_batch_size", "micro_batch_size"}) {
                if (const auto v = cfg->find(k); v != cfg->end() && v->is_primitive() && !v->is_null())
                    field(m_state.environment, std::string("nemo.") + k, v->is_string() ? v->get<std::string>() : v->dump(),
                          {f.info.path, {std::string("hyper_parameters"), std::string("cfg"), std::string(k)}});
            }
        } else {
            for (const auto& [k, v] : dictItems(g, hp))
                field(m_state.environment, "hyper_parameters." + k, simpleText(*f.file, v), {f.info.path, {std::string("hyper_parameters"), k}});
        }
    }
    if (const NodeId fit = g.get(g.get(root, "loops"), "fit_loop"); isDict(g, fit)) {
        walkObject(g, fit, [&](const WalkVisit& v) {
            const Node& n = g[v.node];
            if (v.path.empty() || (n.kind != Kind::Int && n.kind != Kind::Float))
                return;
            const std::string name = formatKeyPath(v.path);
            KeyPath key{std::string("loops"), std::string("fit_loop")};
            key.insert(key.end(), v.path.begin(), v.path.end());
            const bool data = name.find("batch") != std::string::npos || name.find("dataloader") != std::string::npos;
            field(data ? m_state.data : m_state.progress, "fit_loop/" + name, simpleText(*f.file, v.node), {f.info.path, key});
        });
    }
    readFrameworkCounters(f);
    // training_args.bin (a TrainingArguments object) and Lightning hyper_parameters carry the config.
    const Node& r = g[root];
    if (r.kind == Kind::Object && isDict(g, r.state) && f.info.role == "training_args") {
        for (const auto& [k, v] : dictItems(g, r.state)) {
            static const std::set<std::string> wanted = {"learning_rate", "per_device_train_batch_size",
                                                         "gradient_accumulation_steps", "num_train_epochs", "max_steps",
                                                         "seed", "data_seed", "weight_decay", "warmup_steps", "fp16",
                                                         "bf16", "lr_scheduler_type", "optim"};
            if (wanted.contains(k))
                field(m_state.environment, k, simpleText(*f.file, v), {f.info.path, {k}});
        }
    }
}

// Counters that fairseq and Composer keep below the top level (docs/layouts.md §2, §3).
void StateReader::readFrameworkCounters(Opened& f)
{
    const ValueGraph& g = f.file->graph();
    const NodeId root = f.file->root();
    // fairseq (facebookresearch/fairseq@3d262bb2 fairseq/trainer.py state_dict): optimizer_history
    // gains one entry per save, the last is current; its num_updates counts optimizer updates (the
    // global step, the N of checkpoint_E_N.pt). extra_state.train_iterator is the
    // EpochBatchIterator's {epoch (1-based, already the next one at an end-of-epoch save),
    // iterations_in_epoch (batches drawn, updates x update_freq)}.
    if (const NodeId history = g.get(root, "optimizer_history"); g.valid(history) && g[history].kind == Kind::List && !g[history].items.empty()) {
        const int64_t last = static_cast<int64_t>(g[history].items.size()) - 1;
        if (const NodeId n = g.get(g[history].items.back(), "num_updates"); n != kNoNode)
            field(m_state.progress, "num_updates", simpleText(*f.file, n), {f.info.path, {std::string("optimizer_history"), last, std::string("num_updates")}});
        // share_decoder_input_output_embed / share_all_embeddings: the decoder's output projection is
        // its embed_tokens parameter (fairseq/models/transformer/transformer_decoder.py
        // build_output_projection), one parameter to the optimizer. The file need not show the tie:
        // trainer.py state_dict moves tensors to the CPU one by one (utils.move_to_cpu), which copies
        // each from a GPU.
        const NodeId modelCfg = g.get(g.get(root, "cfg"), "model");
        auto flag = [&](const char* k) { return simpleText(*f.file, g.get(modelCfg, k)) == "True"; };
        if (m_state.model && (flag("share_decoder_input_output_embed") || flag("share_all_embeddings"))) {
            for (auto& p : m_state.model->parameters) {
                if (!p.name.ends_with("output_projection.weight") || !p.tiedTo.empty())
                    continue;
                const std::string embed = p.name.substr(0, p.name.size() - std::string("output_projection.weight").size()) + "embed_tokens.weight";
                for (const auto& q : m_state.model->parameters) {
                    if (q.name == embed && q.shape == p.shape)
                        p.tiedTo = embed;
                }
            }
        }
        const NodeId iterator = g.get(g.get(root, "extra_state"), "train_iterator");
        for (const auto& [k, v] : dictItems(g, iterator)) {
            if (k != "version")
                field(m_state.data, "train_iterator." + k, simpleText(*f.file, v),
                      {f.info.path, {std::string("extra_state"), std::string("train_iterator"), k}});
        }
    }
    // Composer (mosaicml/composer@64051888 composer/core/state.py State.state_dict, time.py
    // Timestamp.state_dict): state.timestamp.Timestamp counts batch (optimizer steps, the ba of
    // ep{E}-ba{B}-rank{R}.pt), epoch, sample, token, and the position within the epoch.
    const NodeId timestamp = g.get(g.get(g.get(root, "state"), "timestamp"), "Timestamp");
    for (const auto& [k, v] : dictItems(g, timestamp)) {
        const Node& n = g[v];
        if (n.kind != Kind::Int)
            continue; // the wall-clock timedeltas
        const Provenance from{f.info.path, {std::string("state"), std::string("timestamp"), std::string("Timestamp"), k}};
        if (k.ends_with("_in_epoch"))
            field(m_state.data, "timestamp." + k, simpleText(*f.file, v), from);
        else
            field(m_state.progress, "timestamp." + k, simpleText(*f.file, v), from);
    }
}

// DeepSpeed ZeRO: flat partitions per rank, placed by param_slice_mappings or param_shapes.
void StateReader::readZero()
{
    std::vector<ZeroFile> zero;
    std::vector<std::vector<std::pair<std::string, int64_t>>> shapes;
    for (auto& f : m_files) {
        if (isZeroOptimizerFile(*f.file))
            zero.push_back({f.info, f.file.get()});
        else if (shapes.empty())
            shapes = readZeroParamShapes(*f.file);
    }
    if (zero.empty())
        return;
    if (shapes.empty() && m_state.model) {
        auto& group = shapes.emplace_back();
        for (const auto& p : m_state.model->parameters) {
            if (!looksLikeBuffer(p))
                group.emplace_back(p.name, p.numel);
        }
    }
    m_state.optimizer = readZeroOptimizer(zero, shapes, m_state.warnings);
    for (const auto& z : zero) {
        if (!m_state.scaler)
            m_state.scaler = readDeepSpeedLossScaler(*z.file, z.info.path);
    }
}

} // namespace ckpt::detail
