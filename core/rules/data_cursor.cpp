// SPDX-License-Identifier: MIT
#include "data_cursor.h"

#include "ckpt/formats/python_json.h"
#include "ckpt/io/read_only_file.h"
#include "rule_support.h"

#include <nlohmann/json.hpp>


namespace ckpt::rules {

std::optional<int64_t> DataCursor::consumed() const
{
    if (!epoch || !position || !batchesPerEpoch)
        return std::nullopt;
    return static_cast<int64_t>(*epoch) * *batchesPerEpoch + *position;
}

namespace {

// The recovery guide's manifest may describe the data beside the files (ddp4-mlp:
// "data": {"batches_per_epoch": 64, ...}); the state model keeps only its top-level scalars.
void batchesFromManifest(const TrainingState& s, DataCursor& d)
{
    for (const auto& f : s.layout.files) {
        if (f.role != "manifest")
            continue;
        try {
            const auto doc = parsePythonJson(readBoundedFile(f.path, kSidecarJsonLimit));
            for (const char* section : {"data", "dataset"}) {
                const auto it = doc.find(section);
                if (it == doc.end() || !it->is_object())
                    continue;
                const auto b = it->find("batches_per_epoch");
                if (b != it->end() && b->is_number_integer() && b->get<int64_t>() > 0) {
                    d.batchesPerEpoch = b->get<int64_t>();
                    d.batchesFrom = {f.path, {std::string(section), std::string("batches_per_epoch")}};
                    return;
                }
            }
        } catch (const std::exception&) {
            // an unreadable manifest is the audit's finding
        }
    }
}

} // namespace

std::optional<int64_t> samplesPerBatch(const TrainingState& s, const DataCursor& c)
{
    if (c.positionName != "sampler.position" || !s.globalStep || !c.epoch || !c.batchesPerEpoch || !c.position)
        return std::nullopt;
    const int64_t inEpoch = *s.globalStep * gradientAccumulation(s) - static_cast<int64_t>(*c.epoch) * *c.batchesPerEpoch;
    if (inEpoch == 0 && *c.position == 0)
        return 0;
    if (inEpoch <= 0 || *c.position % inEpoch != 0 || *c.position / inEpoch < 2)
        return std::nullopt;
    return *c.position / inEpoch;
}

DataCursor readDataCursor(const TrainingState& s)
{
    DataCursor d;
    for (const auto* fields : {&s.progress, &s.data}) {
        for (const char* name : {"epoch", "sampler.epoch"}) {
            if (d.epoch)
                break;
            if (const StateField* f = findField(*fields, name); f && toNumber(f->value)) {
                d.epoch = toNumber(f->value);
                d.epochFrom = f->from;
            }
        }
    }
    for (const char* name : {"batch_pos", "position", "cursor", "sampler.position"}) {
        if (const StateField* f = findField(s.data, name); f && toNumber(f->value)) {
            d.position = static_cast<int64_t>(*toNumber(f->value));
            d.positionName = name;
            d.positionFrom = f->from;
            break;
        }
    }
    for (const auto* fields : {&s.data, &s.environment, &s.progress}) {
        for (const char* name : {"data.batches_per_epoch", "batches_per_epoch", "steps_per_epoch"}) {
            if (d.batchesPerEpoch)
                break;
            if (const StateField* f = findField(*fields, name); f && toNumber(f->value).value_or(0) > 0) {
                d.batchesPerEpoch = static_cast<int64_t>(*toNumber(f->value));
                d.batchesFrom = f->from;
            }
        }
    }
    if (!d.batchesPerEpoch)
        batchesFromManifest(s, d);
    for (const char* name : {"data_seed", "sampler.seed", "sampler_seed", "data.sampler_seed"}) {
        if (const StateField* f = findField(s.data, name); f && toNumber(f->value)) {
            d.seed = toNumber(f->value);
            d.seedFrom = f->from;
            break;
        }
    }
    return d;
}

} // namespace ckpt::rules
