// SPDX-License-Identifier: MIT
// The reader behind readTrainingState, internal to core: one StateReader fills one TrainingState
// from the checkpoint's files. Its members live in files named for what they hold:
// training_state.cpp (the order of reading, opening files, JSON sidecars, the layout of a single
// file, the global step), state_reader_parts.cpp (each part of S_t from a pickled file),
// optimizer_name_mapping.cpp (optimizer entries to model parameter names), state_reader_transformers.cpp
// (the Trainer's schedule from training_args.bin and trainer_state.json) and
// state_reader_dcp.cpp (a torch.distributed.checkpoint folder).
#pragma once

#include "ckpt/state/training_state.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

struct DcpCheckpoint;
struct DcpEntry;
struct Found;

namespace detail {

struct Opened {
    LayoutFile info;
    std::shared_ptr<const CheckpointFile> file;
};

class StateReader {
public:
    explicit StateReader(TrainingState& state);
    void read();
    /// The files read() opened (TrainingState::files, when the caller keeps them).
    std::vector<std::shared_ptr<const CheckpointFile>> openedFiles() const;

private:
    // training_state.cpp
    void openFiles();
    void field(std::vector<StateField>& into, const std::string& name, const std::string& value, Provenance from);
    void readJsonSidecars();
    void readModelConfig(const LayoutFile& info);
    void readConfigFacts(const nlohmann::json& j, const std::string& path, const KeyPath& base);
    void readTokenizerFiles(const LayoutFile& info);
    void refineSingleFileLayout();
    void settleGlobalStep();
    void noteLayoutWarnings();
    void readNamedFacts();

    // state_reader_parts.cpp
    void readModel(Opened& f);
    bool readModelChunks(Opened& f);
    void readOptimizer(Opened& f);
    void recordedParamNames(const ValueGraph& g, NodeId root, const Found& found, OptimizerPart& opt);
    void readScheduler(Opened& f);
    void readScaler(Opened& f);
    void readRng(Opened& f);
    void readCounters(Opened& f);
    void readFrameworkCounters(Opened& f);
    void readZero();
    void readMegatron();
    void readMegatronDist();
    void readMegatronExtras(Opened& f);
    void readChainedOptimizer(Opened& f);
    void readMegatronGradScaler(const CheckpointFile& file, NodeId gs, Provenance from);
    void readFp32Masters(Opened& f, NodeId optimizer);

    // state_reader_transformers.cpp
    void readTransformersSchedule();

    // optimizer_name_mapping.cpp
    bool shapesAgree(const std::vector<std::string>& order, const std::vector<std::string>& names) const;
    const ParameterEntry* param(const std::string& name) const;
    void mapByShape(const std::vector<std::string>& names);
    void mapWithinGroups(const std::vector<std::string>& names, std::size_t frozen = 0);
    void mapFrozen(const std::vector<std::string>& params, const std::vector<std::string>& order);
    void mapOptimizerNames();
    void mapTorchtuneNames();

    // state_reader_dcp.cpp
    void readDcp();
    static bool isSchedulerKey(const std::string& top);
    void addGroupItem(OptimizerPart& opt, std::size_t index, const std::string& key, const CheckpointFile& item, Provenance from);
    void readDcpScheduler(const std::vector<std::pair<std::string, std::unique_ptr<CheckpointFile>>>& items, const std::string& metadata,
                          const std::string& top);
    std::optional<double> dcpScalar(const DcpCheckpoint& dcp, const DcpEntry& e);

    TrainingState& m_state;
    std::vector<Opened> m_files;
};

} // namespace detail
} // namespace ckpt
