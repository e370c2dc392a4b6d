// SPDX-License-Identifier: MIT
#include "core/training_state.h"

#include "core/dcp_checkpoint.h"
#include "core/errors.h"
#include "core/read_only_file.h"
#include "core/state_structure.h"
#include "core/state_values.h"
#include "core/zero_optimizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

struct Opened {
    LayoutFile info;
    std::unique_ptr<CheckpointFile> file;
};

class StateReader {
public:
    explicit StateReader(TrainingState& state) : m_state(state) {}

    void read()
    {
        if (m_state.layout.layout == Layout::Dcp) {
            readDcp();
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
        mapOptimizerNames();
        settleGlobalStep();
    }

private:
    void openFiles()
    {
        // A sharded model: the shards carry the tensors; a pytorch_model.bin.index.json only maps
        // names to shards (a safetensors index opens as the whole set, so its shards are skipped).
        bool safetensorsIndex = false;
        for (const auto& info : m_state.layout.files)
            safetensorsIndex = safetensorsIndex || info.path.ends_with(".safetensors.index.json");
        for (const auto& info : m_state.layout.files) {
            if (info.path.ends_with(".bin.index.json") || (safetensorsIndex && info.path.ends_with(".safetensors")))
                continue;
            static const std::set<std::string> skipRoles = {"manifest", "complete", "trainer_state", "other", "metadata"};
            if (skipRoles.contains(info.role) || info.path.ends_with(".distcp"))
                continue;
            try {
                m_files.push_back({info, CheckpointFile::open(info.path)});
            } catch (const OpenError& e) {
                m_state.warnings.push_back(e.what());
            }
        }
    }

    void field(std::vector<StateField>& into, const std::string& name, const std::string& value, Provenance from)
    {
        if (value.empty())
            return;
        into.push_back({name, value, std::move(from)});
    }

    void readJsonSidecars()
    {
        for (const auto& info : m_state.layout.files) {
            if (info.role != "manifest" && info.role != "trainer_state")
                continue;
            nlohmann::json j;
            try {
                j = nlohmann::json::parse(readBoundedFile(info.path, kSidecarJsonLimit));
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

    void refineSingleFileLayout()
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

    void readModel(Opened& f)
    {
        // Several model files (shards of one state_dict) merge into one W; otherwise the first wins.
        if (m_state.model && f.info.role != "model")
            return;
        const ValueGraph& g = f.file->graph();
        const NodeId root = f.file->root();
        Found found;
        for (const char* key : {"model", "state_dict", "module", "model_state_dict", "model_state"}) {
            const NodeId n = g.get(root, key);
            if (stateDictScore(g, n) > 0) {
                found = {n, {std::string(key)}};
                break;
            }
        }
        if (found.node == kNoNode && (f.info.role == "model" || f.info.role == "state") && stateDictScore(g, root) > 0
            && !isOptimizerDict(g, root))
            found = {root, {}};
        if (found.node == kNoNode && (f.info.role == "state" || f.info.role == "model"))
            found = findByStructure(g, root, [&](NodeId n) { return stateDictScore(g, n) > 0; }, 3);
        if (found.node == kNoNode)
            return;
        if (m_state.model && found.key.empty() && stateDictScore(g, found.node) == 0)
            return;
        ModelPart model = m_state.model ? std::move(*m_state.model) : ModelPart{};
        if (model.parameters.empty())
            model.from = {f.info.path, found.key};
        for (const auto& [name, value] : dictItems(g, found.node)) {
            if (g[value].kind != Kind::Tensor)
                continue;
            const TensorInfo& t = f.file->tensors()[g[value].ref];
            KeyPath key = found.key;
            key.push_back(name);
            model.parameters.push_back({name, t.dtypeName, t.shape, t.numel(), {f.info.path, key}});
        }
        m_state.model = std::move(model);
    }

    void readOptimizer(Opened& f)
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
                } else if (const std::string text = simpleText(*f.file, v); !text.empty()) {
                    group.hyperparameters.push_back({k, text, {f.info.path, key}});
                }
            }
            opt.groups.push_back(std::move(group));
        }
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

    void readScheduler(Opened& f)
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
        if (auto schedule = readLrSchedule(g, found.node))
            m_state.scheduler = SchedulerPart{std::move(*schedule), {f.info.path, found.key}};
    }

    void readScaler(Opened& f)
    {
        if (m_state.scaler)
            return;
        const ValueGraph& g = f.file->graph();
        const NodeId root = f.file->root();
        Found found;
        if (f.info.role == "scaler" && isDict(g, root))
            found = {root, {}};
        for (const char* key : {"scaler", "grad_scaler", "amp_scaling_state", "MixedPrecision", "MixedPrecisionPlugin",
                                "NativeMixedPrecisionPlugin"}) {
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

    void readRng(Opened& f)
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

    void readCounters(Opened& f)
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
        auto scan = [&](NodeId dict, const KeyPath& prefix) {
            for (const auto& [k, v] : dictItems(g, dict)) {
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
                if (progressKeys.contains(k))
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
        if (const NodeId hp = g.get(root, "hyper_parameters"); isDict(g, hp)) {
            for (const auto& [k, v] : dictItems(g, hp))
                field(m_state.environment, "hyper_parameters." + k, simpleText(*f.file, v), {f.info.path, {std::string("hyper_parameters"), k}});
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

    // DeepSpeed ZeRO: flat partitions per rank, placed by param_slice_mappings or param_shapes.
    void readZero()
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

    // Moments have their parameter's shape: with a safetensors model (tensors sorted by name, not in
    // the optimizer's order) an order-based mapping whose shapes disagree is wrong. Then each
    // optimizer entry takes the next unused parameter of its shape.
    bool shapesAgree(const std::vector<std::string>& order, const std::vector<std::string>& names) const
    {
        for (const auto& ps : m_state.optimizer->paramState) {
            const auto it = std::find(order.begin(), order.end(), ps.index);
            const ParameterEntry* p = it == order.end() ? nullptr : param((names)[static_cast<std::size_t>(it - order.begin())]);
            for (const auto& m : ps.moments) {
                if (p && !m.shape.empty() && m.shape != p->shape)
                    return false;
            }
        }
        return true;
    }

    const ParameterEntry* param(const std::string& name) const
    {
        for (const auto& p : m_state.model->parameters) {
            if (p.name == name)
                return &p;
        }
        return nullptr;
    }

    void mapByShape(const std::vector<std::string>& names)
    {
        OptimizerPart& opt = *m_state.optimizer;
        std::set<std::string> used;
        bool ambiguous = false;
        for (auto& ps : opt.paramState) {
            const MomentInfo* m = nullptr;
            for (const auto& mi : ps.moments)
                m = m ? m : (mi.shape.empty() ? nullptr : &mi);
            if (!m)
                continue;
            int candidates = 0;
            std::string pick;
            for (const auto& n : names) {
                const ParameterEntry* p = param(n);
                if (p && p->shape == m->shape && !used.contains(n)) {
                    if (candidates++ == 0)
                        pick = n;
                }
            }
            ambiguous = ambiguous || candidates > 1;
            if (!pick.empty()) {
                ps.name = pick;
                used.insert(pick);
            }
        }
        opt.nameMapping = std::string("by shape (the model file's key order is not the optimizer's)") +
                          (ambiguous ? ", ambiguous among parameters of equal shape" : "");
        if (ambiguous)
            m_state.warnings.push_back("optimizer parameters were matched to model parameters by shape, and several parameters "
                                       "share a shape: names of those may be swapped");
    }

    void mapOptimizerNames()
    {
        if (!m_state.optimizer || !m_state.optimizer->nameMapping.empty())
            return;
        OptimizerPart& opt = *m_state.optimizer;
        std::vector<std::string> order; // optimizer keys in param_groups order
        for (const auto& gr : opt.groups)
            order.insert(order.end(), gr.params.begin(), gr.params.end());
        const bool keysAreNames = !order.empty() && std::any_of(order.begin(), order.end(), [](const std::string& k) {
            return !k.empty() && !std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
        });
        if (keysAreNames) {
            opt.nameMapping = "by name";
            for (auto& ps : opt.paramState)
                ps.name = ps.index;
            return;
        }
        if (!m_state.model) {
            opt.nameMapping = "none (no model state in this checkpoint)";
            return;
        }
        std::vector<std::string> all, params;
        for (const auto& p : m_state.model->parameters) {
            all.push_back(p.name);
            if (!looksLikeBuffer(p))
                params.push_back(p.name);
        }
        const std::vector<std::string>* names = nullptr;
        if (params.size() == order.size()) {
            names = &params;
            opt.nameMapping = params.size() == all.size() ? "by order" : "by order, buffers skipped";
        } else if (all.size() == order.size()) {
            names = &all;
            opt.nameMapping = "by order";
        } else if (opt.paramState.size() == 1 && !opt.paramState[0].moments.empty()) {
            // ZeRO / flat optimizers keep one flat fp32 partition for all parameters.
            int64_t modelNumel = 0, momentNumel = 1;
            for (const auto& p : m_state.model->parameters)
                modelNumel += looksLikeBuffer(p) ? 0 : p.numel;
            for (int64_t d : opt.paramState[0].moments[0].shape)
                momentNumel *= d;
            if (momentNumel >= modelNumel && momentNumel < modelNumel + 4096) {
                opt.nameMapping = "flat partition of all " + std::to_string(params.size()) + " parameters";
                opt.paramState[0].name = "(all parameters, flattened)";
                return;
            }
            opt.nameMapping = "none (a flat partition of " + std::to_string(momentNumel) + " elements, the model has "
                            + std::to_string(modelNumel) + ")";
            m_state.warnings.push_back("optimizer parameters cannot be matched to model parameters: " + opt.nameMapping);
            return;
        } else {
            opt.nameMapping = "none (" + std::to_string(order.size()) + " optimizer parameters, "
                            + std::to_string(params.size()) + " model parameters)";
            m_state.warnings.push_back("optimizer parameters cannot be matched to model parameters: " + opt.nameMapping);
            return;
        }
        // Only a safetensors model loses the module's key order (it stores names sorted); with a
        // torch.save state_dict the order is the module's, and a disagreement is a real fault for
        // the rules (optimizer.moment-shape) to report, not something to paper over.
        const bool sortedModel = std::any_of(m_state.model->parameters.begin(), m_state.model->parameters.end(),
                                             [](const ParameterEntry& p) { return p.from.file.ends_with(".safetensors"); });
        if (sortedModel && !shapesAgree(order, *names)) {
            mapByShape(*names);
            return;
        }
        for (auto& ps : opt.paramState) {
            const auto it = std::find(order.begin(), order.end(), ps.index);
            if (it != order.end())
                ps.name = (*names)[static_cast<std::size_t>(it - order.begin())];
        }
    }

    // A DCP folder: tensors and values are addressed by flattened keys; the model is every tensor
    // outside the optimizer's subtree, the optimizer state is keyed by parameter name (FQN).
    void readDcp()
    {
        DcpCheckpoint dcp;
        try {
            dcp = readDcpCheckpoint(m_state.path);
        } catch (const std::exception& e) {
            m_state.warnings.push_back(e.what());
            return;
        }
        m_state.warnings.insert(m_state.warnings.end(), dcp.warnings.begin(), dcp.warnings.end());
        const std::string metadata = m_state.path + "/" + (dcp.metadataFiles.empty() ? std::string(".metadata") : dcp.metadataFiles.front());
        if (!dcp.version.empty())
            field(m_state.environment, "dcp_version", dcp.version, {metadata, {std::string("version")}});
        auto partOf = [](const DcpEntry& e) -> std::string {
            return e.path.empty() || !std::holds_alternative<std::string>(e.path[0]) ? std::string() : std::get<std::string>(e.path[0]);
        };
        ModelPart model;
        model.from = {metadata, {}};
        OptimizerPart opt;
        opt.from = {metadata, {}};
        opt.nameMapping = "by name";
        std::vector<std::pair<std::string, std::unique_ptr<CheckpointFile>>> schedulerItems;
        std::string schedulerTop;
        std::set<std::string> stateKeys;
        for (const auto& e : dcp.entries) {
            const std::string top = partOf(e);
            const bool optimizer = top == "optim" || top == "optimizer";
            if (optimizer && e.path.size() >= 4 && e.path[1] == KeyPart(std::string("state"))) {
                const std::string param = formatKeyPath(KeyPath(e.path.begin() + 2, e.path.end() - 1));
                const std::string moment = std::holds_alternative<std::string>(e.path.back()) ? std::get<std::string>(e.path.back()) : "?";
                stateKeys.insert(moment);
                auto it = std::find_if(opt.paramState.begin(), opt.paramState.end(), [&](const ParamState& p) { return p.index == param; });
                if (it == opt.paramState.end()) {
                    opt.paramState.push_back({param, param, std::nullopt, {}, -1});
                    it = opt.paramState.end() - 1;
                }
                if (moment == "step")
                    it->step = dcpScalar(dcp, e);
                else if (!e.isBytes)
                    it->moments.push_back({moment, e.dtype, e.size, {metadata, e.path}});
                continue;
            }
            if (e.isBytes) {
                // A pickled value: a counter, or a whole tensor-free dict (an optimizer with no
                // state yet, a scheduler) saved as one item by the <= 2.3 flattening; torch >= 2.4
                // descends every dict, so each hyperparameter and scheduler field is its own item.
                if (e.chunks.size() != 1 || e.path.empty())
                    continue;
                try {
                    auto item = dcp.openChunk(e.chunks.front());
                    const std::string last = std::holds_alternative<std::string>(e.path.back()) ? std::get<std::string>(e.path.back()) : "";
                    if (optimizer && e.path.size() == 4 && e.path[1] == KeyPart(std::string("param_groups"))
                        && std::holds_alternative<int64_t>(e.path[2])) {
                        addGroupItem(opt, static_cast<std::size_t>(std::get<int64_t>(e.path[2])), last, *item, {metadata, e.path});
                    } else if (isSchedulerKey(top) && e.path.size() == 2) {
                        schedulerItems.emplace_back(last, std::move(item));
                        schedulerTop = top;
                    } else if (auto v = scalarOf(*item, item->root()); v && (e.path.size() == 1 || !last.empty())) {
                        const bool data = kDataKeys.contains(last), env = kEnvKeys.contains(last);
                        field(data ? m_state.data : env ? m_state.environment : m_state.progress, e.fqn, numberText(*v), {metadata, e.path});
                    } else {
                        LayoutFile info{item->path(), optimizer ? "optimizer" : "state", e.chunks.front().rank};
                        m_files.push_back({std::move(info), std::move(item)});
                    }
                } catch (const std::exception& ex) {
                    m_state.warnings.push_back(ex.what());
                }
                continue;
            }
            if (optimizer)
                continue;
            std::string name = e.fqn;
            if (top == "model" && name.size() > 6)
                name = name.substr(6);
            int64_t numel = 1;
            for (int64_t d : e.size)
                numel *= d;
            model.parameters.push_back({name, e.dtype, e.size, numel, {metadata, e.path}});
        }
        if (!model.parameters.empty())
            m_state.model = std::move(model);
        readDcpScheduler(schedulerItems, metadata, schedulerTop);
        for (auto& ps : opt.paramState) {
            for (std::size_t gi = 0; gi < opt.groups.size() && ps.group < 0; ++gi) {
                const auto& params = opt.groups[gi].params;
                if (std::find(params.begin(), params.end(), ps.index) != params.end())
                    ps.group = static_cast<int>(gi);
            }
        }
        if (!opt.paramState.empty() || !opt.groups.empty()) { // groups alone: an optimizer before its first step
            std::set<std::string> groupKeys;
            for (const auto& g : opt.groups) {
                for (const auto& hp : g.hyperparameters)
                    groupKeys.insert(hp.name);
            }
            opt.type = inferOptimizerType(stateKeys, groupKeys);
            m_state.optimizer = std::move(opt);
        }
        for (auto& f : m_files) {
            readOptimizer(f);
            readScheduler(f);
            readScaler(f);
            readRng(f);
            readCounters(f);
        }
        mapOptimizerNames();
    }

    static bool isSchedulerKey(const std::string& top)
    {
        return top == "lr_scheduler" || top == "scheduler" || top == "lr_schedulers" || top == "schedulers";
    }

    // optimizer.param_groups.<i>.<key>: one hyperparameter (or the group's parameter names).
    void addGroupItem(OptimizerPart& opt, std::size_t index, const std::string& key, const CheckpointFile& item, Provenance from)
    {
        if (index >= 1024)
            return;
        if (opt.groups.size() <= index)
            opt.groups.resize(index + 1);
        const ValueGraph& g = item.graph();
        if (key == "params") {
            for (NodeId p : g.valid(item.root()) ? g[item.root()].items : std::vector<NodeId>{})
                opt.groups[index].params.push_back(g[p].kind == Kind::String ? g[p].text : reprOf(g, p));
            for (auto& ps : opt.paramState) {
                const auto& params = opt.groups[index].params;
                if (std::find(params.begin(), params.end(), ps.index) != params.end())
                    ps.group = static_cast<int>(index);
            }
        } else if (const std::string text = simpleText(item, item.root()); !text.empty()) {
            opt.groups[index].hyperparameters.push_back({key, text, std::move(from)});
        }
    }

    // lr_scheduler.<field> items rebuilt into one state dict, as the scheduler saved it.
    void readDcpScheduler(const std::vector<std::pair<std::string, std::unique_ptr<CheckpointFile>>>& items, const std::string& metadata,
                          const std::string& top)
    {
        if (items.empty() || m_state.scheduler)
            return;
        ValueGraph g;
        const NodeId dict = g.add(Kind::Dict);
        for (const auto& [key, item] : items) {
            const NodeId k = g.addText(Kind::String, key);
            const NodeId v = copyValue(item->graph(), item->root(), g);
            g[dict].items.push_back(k);
            g[dict].items.push_back(v);
        }
        if (auto schedule = readLrSchedule(g, dict))
            m_state.scheduler = SchedulerPart{std::move(*schedule), {metadata, {top}}};
    }

    std::optional<double> dcpScalar(const DcpCheckpoint& dcp, const DcpEntry& e)
    {
        if (e.chunks.size() != 1)
            return std::nullopt;
        try {
            auto item = dcp.openChunk(e.chunks.front());
            return scalarOf(*item, item->root());
        } catch (const std::exception& ex) {
            m_state.warnings.push_back(ex.what());
            return std::nullopt;
        }
    }

    void settleGlobalStep()
    {
        for (const char* name : {"global_step", "global_steps", "step", "iteration", "iter"}) {
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

    TrainingState& m_state;
    std::vector<Opened> m_files;
};

} // namespace

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
    StateReader(state).read();
    return state;
}

} // namespace ckpt
