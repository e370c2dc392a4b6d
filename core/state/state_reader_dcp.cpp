// SPDX-License-Identifier: MIT
// The training state of a torch.distributed.checkpoint (DCP) folder: tensors and pickled values
// addressed by flattened keys, regrouped into the model, the optimizer (state by parameter
// name, param_groups item by item), the LR scheduler and the counters.
#include "state_reader.h"

#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/state/state_values.h"
#include "state_structure.h"

#include <algorithm>
#include <set>

namespace ckpt::detail {

// A DCP folder: tensors and values are addressed by flattened keys; the model is every tensor
// outside the optimizer's subtree, the optimizer state is keyed by parameter name (FQN).
namespace {

// ("optimizer", "state.<fqn>.<name>") -> ("optimizer", "state", "<fqn>", "<name>"), and the same for
// param_groups; other paths unchanged. The fqn keeps its dots; the last segment is the name.
KeyPath unflattenOptimizerPath(const KeyPath& path)
{
    if (path.size() != 2 || !std::holds_alternative<std::string>(path[1]))
        return path;
    const std::string& flat = std::get<std::string>(path[1]);
    for (const char* part : {"state.", "param_groups."}) {
        const std::string prefix = part;
        const auto dot = flat.rfind('.');
        if (!flat.starts_with(prefix) || dot == std::string::npos || dot <= prefix.size())
            continue;
        return {path[0], prefix.substr(0, prefix.size() - 1), flat.substr(prefix.size(), dot - prefix.size()), flat.substr(dot + 1)};
    }
    return path;
}

} // namespace

void StateReader::readDcp()
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
    // flatten_optimizer_state_dict=True (torchtitan, pytorch@b93076cf torch/distributed/checkpoint/
    // state_dict.py _flatten_optim_state_dict): optimizer.param_groups.<fqn>.<key>, every group value
    // repeated per parameter. Parameters whose values agree form one group, in first-seen order.
    std::vector<std::pair<std::string, std::vector<StateField>>> perFqn;
    for (const auto& e : dcp.entries) {
        const std::string top = partOf(e);
        const bool optimizer = top == "optim" || top == "optimizer";
        // torchtitan's optimizer container hands DCP an already flat dict (flatten_optimizer_state_dict=True,
        // torchtitan@970fbddb components/optimizer/utils.py): ("optimizer", "state.<fqn>.exp_avg"),
        // ("optimizer", "param_groups.<fqn>.lr"). Read as the nested form; provenances keep the saved path.
        const KeyPath path = optimizer ? unflattenOptimizerPath(e.path) : e.path;
        if (optimizer && path.size() >= 4 && path[1] == KeyPart(std::string("state"))) {
            const std::string param = formatKeyPath(KeyPath(path.begin() + 2, path.end() - 1));
            const std::string moment = std::holds_alternative<std::string>(path.back()) ? std::get<std::string>(path.back()) : "?";
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
            if (top == "dataloader" && e.path.size() == 2 && std::holds_alternative<std::string>(e.path[1])
                && std::get<std::string>(e.path[1]).starts_with("dp_rank_")) {
                // torchtitan's per-dp-rank loader state, pickled bytes: its presence is what the rules use.
                field(m_state.data, e.fqn, "saved", {metadata, e.path});
                continue;
            }
            try {
                auto item = dcp.openChunk(e.chunks.front());
                const std::string last = std::holds_alternative<std::string>(path.back()) ? std::get<std::string>(path.back()) : "";
                if (optimizer && path.size() == 4 && path[1] == KeyPart(std::string("param_groups"))
                    && std::holds_alternative<int64_t>(path[2])) {
                    addGroupItem(opt, static_cast<std::size_t>(std::get<int64_t>(path[2])), last, *item, {metadata, e.path});
                } else if (optimizer && path.size() >= 4 && path[1] == KeyPart(std::string("param_groups"))) {
                    const std::string fqn = formatKeyPath(KeyPath(path.begin() + 2, path.end() - 1));
                    auto it = std::find_if(perFqn.begin(), perFqn.end(), [&](const auto& p) { return p.first == fqn; });
                    if (it == perFqn.end())
                        it = perFqn.insert(perFqn.end(), {fqn, {}});
                    if (const std::string text = simpleText(*item, item->root()); !text.empty())
                        it->second.push_back({last, text, {metadata, e.path}});
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
    for (const auto& entry : perFqn) {
        // Named, not a structured binding: clang 14 (the fuzz preset) cannot capture those in a lambda.
        const auto& fqn = entry.first;
        const auto& values = entry.second;
        auto sameValues = [&](const ParamGroup& g) {
            if (g.hyperparameters.size() != values.size())
                return false;
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (g.hyperparameters[i].name != values[i].name || g.hyperparameters[i].value != values[i].value)
                    return false;
            }
            return true;
        };
        auto g = std::find_if(opt.groups.begin(), opt.groups.end(), sameValues);
        if (g == opt.groups.end())
            g = opt.groups.insert(opt.groups.end(), ParamGroup{values, {}});
        g->params.push_back(fqn);
    }
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

bool StateReader::isSchedulerKey(const std::string& top)
{
    return top == "lr_scheduler" || top == "scheduler" || top == "lr_schedulers" || top == "schedulers";
}

// optimizer.param_groups.<i>.<key>: one hyperparameter (or the group's parameter names).
void StateReader::addGroupItem(OptimizerPart& opt, std::size_t index, const std::string& key, const CheckpointFile& item, Provenance from)
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
void StateReader::readDcpScheduler(const std::vector<std::pair<std::string, std::unique_ptr<CheckpointFile>>>& items, const std::string& metadata,
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
    if (auto schedule = readLrSchedule(g, dict)) {
        m_state.scheduler = SchedulerPart{std::move(*schedule), {metadata, {top}}};
        return;
    }
    // torchtitan's LRSchedulersContainer saves only {"last_epoch"} (torchtitan@970fbddb
    // components/optimizer/lr_scheduler.py state_dict): its LambdaLR warmup/decay functions are
    // code, so the position is all there is.
    if (items.size() == 1 && items.front().first == "last_epoch") {
        if (const auto v = scalarOf(*items.front().second, items.front().second->root())) {
            LrSchedule s;
            s.kind = "LambdaLR";
            s.why = "torchtitan saves only last_epoch; its warmup and decay functions are code";
            s.lastEpoch = static_cast<int64_t>(*v);
            m_state.scheduler = SchedulerPart{std::move(s), {metadata, {top}}};
        }
    }
}

std::optional<double> StateReader::dcpScalar(const DcpCheckpoint& dcp, const DcpEntry& e)
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

} // namespace ckpt::detail
