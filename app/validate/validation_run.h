// SPDX-License-Identifier: MIT
// The validator's run as a class, shared by its two halves: validation.cpp prepares the replay's
// input from the checkpoint and the probe and runs it; validation_compare.cpp compares the result
// with the probe, component by component and update by update. Internal to app/validate.
#pragma once

#include "app/validate/comparison.h"
#include "app/validate/probe.h"
#include "app/validate/replay.h"
#include "app/validate/validation.h"
#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/state/training_state.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ckpt::validate::detail {

// 1-6 read and prepare (environment, W, O, L, A, R), 7-8 the module and W load and O restored, then
// one step per recorded update, then the comparison: 10 steps for one update, 9 + K for K.
constexpr int kStepsBeforeUpdates = 8;

using json = nlohmann::json;

// A field's text as JSON: numbers as numbers, true/false as booleans, anything else as a string.
inline json valueOf(const std::string& text)
{
    if (text == "true" || text == "True")
        return true;
    if (text == "false" || text == "False")
        return false;
    try {
        std::size_t used = 0;
        const double d = std::stod(text, &used);
        if (used == text.size())
            return d;
    } catch (const std::exception&) {
    }
    return text;
}

inline std::vector<double> numbersIn(const std::string& text)
{
    std::vector<double> out;
    std::string token;
    for (char c : text + ",") {
        if (c == '[' || c == ']' || c == '(' || c == ')' || c == ' ')
            continue;
        if (c == ',') {
            if (!token.empty())
                out.push_back(std::stod(token));
            token.clear();
        } else {
            token += c;
        }
    }
    return out;
}

class Validation {
public:
    Validation(const ValidateOptions& options, const std::function<void(const json&)>& emit) : m_opt(options), m_emit(emit) {}

    int run();

private:
    int steps() const { return kStepsBeforeUpdates + std::max<int>(1, static_cast<int>(m_records.size())) + 1; }

    void progress(int index, const std::string& stage, const std::string& message);

    int finish(json& report, int code, const std::string& error);

    const CheckpointFile& file(const std::string& path);

    HostTensor tensor(const Provenance& from);

    std::vector<std::byte> rawBytes(const std::string& path, const KeyPath& key);

    // -- the six preparation steps --------------------------------------------------------------

    void prepare(json& report);

    const StateField* field(const std::vector<StateField>& fields, const std::string& name, int rank = -2);

    int rankOfFile(const std::string& path) const;

    std::map<std::string, std::string> optimizerNames(const OptimizerPart& o, const json& probeGroups, json& report);

    void optimizer(json& report);

    void checkMomentShape(const std::string& index, const std::string& name, const std::string& moment, const HostTensor& t, const json& report);

    void learningRate();

    void scaler();

    void updates();

    void generators();

    // -- step 10: the comparison, update by update ------------------------------------------------

    int compare(json& report, const ReplayResult& res);

    Component batch(const UpdateResult& res);

    std::map<std::string, json> probeDigests(const char* section, const char* phase);

    Component parameters(const UpdateResult& res);

    void probeOptimizerState(const char* phase, std::map<std::string, json>& moments, json& steps);

    static std::map<std::string, TensorDigest> flatten(const std::map<std::string, std::map<std::string, TensorDigest>>& m);

    static json stepsJson(const std::map<std::string, int64_t>& steps, const json& names);

    Component optimizerComponent(const ReplayResult& all, const UpdateResult& res);

    Component lrComponent();

    Component scalerComponent(const UpdateResult& res);

    struct ScalarOr {
        json scale, tracker;
    };
    ScalarOr scalerValues() const;

    Component rngComponent(const ReplayResult& all, const UpdateResult& res);

    Component numerics(const ReplayResult& all, const UpdateResult& res);

    static json loadJson(const ReplayResult& res);

    const ValidateOptions& m_opt;
    const std::function<void(const json&)>& m_emit;
    TrainingState m_state;
    Probe m_probe;
    ReplayInput m_in;
    std::map<std::string, std::unique_ptr<CheckpointFile>> m_files;
    std::map<int, std::map<std::string, std::string>> m_rng; // rank -> kind -> fingerprint (checkpoint)
    std::string m_lrSource;
    std::vector<std::string> m_notes;
    std::vector<const json*> m_records; // the probe's updates: probe.json itself, then its next_updates
    std::vector<bool> m_lrFromProbe;    // per update: the LR applied is the probe's (not reconstructable)
    std::size_t m_k = 0;                // the update being compared
    const json& rec() const { return *m_records[m_k]; }
};

} // namespace ckpt::validate::detail
