// SPDX-License-Identifier: MIT
#include "ui/statecomparison.h"

#include "ui/fieldlabels.h"

#include <charconv>
#include <filesystem>
#include <cmath>
#include <map>
#include <optional>

namespace {

std::string number(double value)
{
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

template <typename T>
std::string optionalText(const std::optional<T>& value)
{
    if (!value)
        return {};
    if constexpr (std::is_floating_point_v<T>)
        return number(*value);
    else
        return std::to_string(*value);
}

std::string join(const std::vector<double>& values)
{
    std::string text;
    for (const double value : values)
        text += (text.empty() ? "" : ", ") + number(value);
    return values.empty() ? std::string() : "[" + text + "]";
}

std::string shapeText(const std::vector<int64_t>& shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

std::optional<double> parseNumber(const std::string& text)
{
    double value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size())
        return std::nullopt;
    return value;
}

CompareRow row(std::string field, std::string a, std::string b)
{
    CompareRow r{std::move(field), std::move(a), std::move(b), CompareStatus::Same, {}};
    if (r.a.empty() && !r.b.empty())
        r.status = CompareStatus::OnlyB;
    else if (!r.a.empty() && r.b.empty())
        r.status = CompareStatus::OnlyA;
    else if (r.a != r.b)
        r.status = CompareStatus::Changed;
    return r;
}

class Comparer {
public:
    Comparer(const ckpt::TrainingState& a, const ckpt::TrainingState& b)
        : m_a(a)
        , m_b(b)
    {
        if (a.globalStep && b.globalStep)
            m_stepDelta = *b.globalStep - *a.globalStep;
    }

    StateComparison run()
    {
        fields("Progress counters (C)", m_a.progress, m_b.progress, true);
        fields("Data cursor (D)", m_a.data, m_b.data, false);
        scheduler();
        scaler();
        optimizer();
        rng();
        model();
        fields("Environment (E)", m_a.environment, m_b.environment, false);
        return std::move(m_result);
    }

private:
    void add(CompareSection section)
    {
        for (const CompareRow& r : section.rows) {
            if (r.status == CompareStatus::Inconsistent)
                m_result.inconsistencies.push_back(section.component + ": " + r.note);
        }
        m_result.sections.push_back(std::move(section));
    }

    void markInconsistent(CompareRow& r, std::string note)
    {
        r.status = CompareStatus::Inconsistent;
        r.note = std::move(note);
    }

    // A counter that moved against the global step.
    void checkMonotonic(CompareRow& r)
    {
        if (!m_stepDelta || *m_stepDelta == 0 || r.status != CompareStatus::Changed)
            return;
        const auto a = parseNumber(r.a), b = parseNumber(r.b);
        if (a && b && (*b - *a) * static_cast<double>(*m_stepDelta) < 0)
            markInconsistent(r, r.field + " went from " + r.a + " to " + r.b + " while the global step moved by " + std::to_string(*m_stepDelta));
    }

    // A name saved once per rank (sampler.position in every rng-rank-N.pt) is keyed by its file
    // too, so a rank that differs is not hidden behind another rank's value.
    static std::vector<std::pair<std::string, std::string>> keyed(const std::vector<ckpt::StateField>& fields)
    {
        const std::vector<std::string> labels = fieldLabels(fields);
        std::vector<std::pair<std::string, std::string>> out;
        for (std::size_t i = 0; i < fields.size(); ++i)
            out.emplace_back(labels[i], fields[i].value);
        return out;
    }

    void fields(const char* component, const std::vector<ckpt::StateField>& a, const std::vector<ckpt::StateField>& b, bool counters)
    {
        CompareSection section{component, {}};
        std::map<std::string, std::pair<std::string, std::string>> values;
        std::vector<std::string> order; // first appearance, A before B
        for (const bool isA : {true, false}) {
            for (auto& [key, value] : keyed(isA ? a : b)) {
                if (!values.contains(key))
                    order.push_back(key);
                (isA ? values[key].first : values[key].second) = value;
            }
        }
        for (const std::string& key : order) {
            CompareRow r = row(key, values[key].first, values[key].second);
            if (counters)
                checkMonotonic(r);
            section.rows.push_back(std::move(r));
        }
        add(std::move(section));
    }

    void scheduler()
    {
        CompareSection section{"Scheduler (L)", {}};
        const ckpt::LrSchedule* a = m_a.scheduler ? &m_a.scheduler->schedule : nullptr;
        const ckpt::LrSchedule* b = m_b.scheduler ? &m_b.scheduler->schedule : nullptr;
        section.rows.push_back(row("kind", a ? a->kind : "", b ? b->kind : ""));
        CompareRow position = row("last_epoch", a ? std::to_string(a->lastEpoch) : "", b ? std::to_string(b->lastEpoch) : "");
        if (a && b && m_stepDelta && b->lastEpoch - a->lastEpoch != *m_stepDelta) {
            markInconsistent(position, "the scheduler advanced " + std::to_string(b->lastEpoch - a->lastEpoch)
                                           + " positions while the global step advanced " + std::to_string(*m_stepDelta));
        }
        section.rows.push_back(std::move(position));
        section.rows.push_back(row("last_lr", a ? join(a->lastLr) : "", b ? join(b->lastLr) : ""));
        section.rows.push_back(row("base_lrs", a ? join(a->baseLrs) : "", b ? join(b->baseLrs) : ""));
        add(std::move(section));
    }

    void scaler()
    {
        CompareSection section{"Grad scaler (A)", {}};
        const ckpt::ScalerPart* a = m_a.scaler ? &*m_a.scaler : nullptr;
        const ckpt::ScalerPart* b = m_b.scaler ? &*m_b.scaler : nullptr;
        auto text = [](const ckpt::ScalerPart* s, auto member) { return s ? optionalText(s->*member) : std::string(); };
        section.rows.push_back(row("enabled", a ? (a->enabled ? "true" : "false") : "", b ? (b->enabled ? "true" : "false") : ""));
        section.rows.push_back(row("scale", text(a, &ckpt::ScalerPart::scale), text(b, &ckpt::ScalerPart::scale)));
        section.rows.push_back(row("growth_tracker", text(a, &ckpt::ScalerPart::growthTracker), text(b, &ckpt::ScalerPart::growthTracker)));
        section.rows.push_back(row("growth_interval", text(a, &ckpt::ScalerPart::growthInterval), text(b, &ckpt::ScalerPart::growthInterval)));
        section.rows.push_back(row("growth_factor", text(a, &ckpt::ScalerPart::growthFactor), text(b, &ckpt::ScalerPart::growthFactor)));
        section.rows.push_back(row("backoff_factor", text(a, &ckpt::ScalerPart::backoffFactor), text(b, &ckpt::ScalerPart::backoffFactor)));
        add(std::move(section));
    }

    static std::optional<double> firstStep(const ckpt::OptimizerPart* o)
    {
        if (!o)
            return std::nullopt;
        for (const ckpt::ParamState& state : o->paramState) {
            if (state.step)
                return state.step;
        }
        return std::nullopt;
    }

    void optimizer()
    {
        CompareSection section{"Optimizer (O)", {}};
        const ckpt::OptimizerPart* a = m_a.optimizer ? &*m_a.optimizer : nullptr;
        const ckpt::OptimizerPart* b = m_b.optimizer ? &*m_b.optimizer : nullptr;
        section.rows.push_back(row("type", a ? a->type : "", b ? b->type : ""));
        section.rows.push_back(row("param groups", a ? std::to_string(a->groups.size()) : "", b ? std::to_string(b->groups.size()) : ""));
        section.rows.push_back(row("parameters with state", a ? std::to_string(a->paramState.size()) : "",
                                   b ? std::to_string(b->paramState.size()) : ""));
        const auto stepA = firstStep(a), stepB = firstStep(b);
        CompareRow step = row("step (first parameter)", optionalText(stepA), optionalText(stepB));
        if (stepA && stepB && m_stepDelta) {
            const double moved = *stepB - *stepA;
            if (moved * static_cast<double>(*m_stepDelta) < 0 || std::abs(moved) > std::abs(static_cast<double>(*m_stepDelta)))
                markInconsistent(step, "the optimizer's step moved by " + number(moved) + " while the global step moved by "
                                           + std::to_string(*m_stepDelta));
        }
        section.rows.push_back(std::move(step));
        const std::size_t groups = std::max(a ? a->groups.size() : 0, b ? b->groups.size() : 0);
        for (std::size_t g = 0; g < groups; ++g) {
            std::vector<ckpt::StateField> none;
            const auto& ha = a && g < a->groups.size() ? a->groups[g].hyperparameters : none;
            const auto& hb = b && g < b->groups.size() ? b->groups[g].hyperparameters : none;
            std::map<std::string, std::pair<std::string, std::string>> values;
            for (const auto& field : ha)
                values[field.name].first = field.value;
            for (const auto& field : hb)
                values[field.name].second = field.value;
            for (const auto& [name, pair] : values)
                section.rows.push_back(row("group " + std::to_string(g) + " " + name, pair.first, pair.second));
        }
        add(std::move(section));
    }

    static std::map<std::string, std::string> fingerprints(const ckpt::TrainingState& state)
    {
        std::map<std::string, std::string> out;
        if (!state.rng)
            return out;
        for (const auto& generator : state.rng->generators) {
            std::string key = generator.rank >= 0 ? "rank " + std::to_string(generator.rank) + " " : std::string();
            key += ckpt::rngKindName(generator.state.kind);
            const std::string path = ckpt::formatKeyPath(generator.state.key);
            if (!path.empty())
                key += " (" + path + ")";
            out[key] = generator.state.valid ? generator.state.fingerprint : "invalid: " + generator.state.problem;
        }
        return out;
    }

    void rng()
    {
        CompareSection section{"RNG fingerprints (R)", {}};
        std::map<std::string, std::pair<std::string, std::string>> values;
        for (const auto& [key, value] : fingerprints(m_a))
            values[key].first = value;
        for (const auto& [key, value] : fingerprints(m_b))
            values[key].second = value;
        for (const auto& [key, pair] : values)
            section.rows.push_back(row(key, pair.first, pair.second));
        add(std::move(section));
    }

    void model()
    {
        CompareSection section{"Model (W)", {}};
        const ckpt::ModelPart* a = m_a.model ? &*m_a.model : nullptr;
        const ckpt::ModelPart* b = m_b.model ? &*m_b.model : nullptr;
        auto total = [](const ckpt::ModelPart* m) {
            int64_t n = 0;
            for (const auto& p : m->parameters)
                n += p.numel;
            return n;
        };
        section.rows.push_back(row("tensors", a ? std::to_string(a->parameters.size()) : "", b ? std::to_string(b->parameters.size()) : ""));
        section.rows.push_back(row("elements", a ? std::to_string(total(a)) : "", b ? std::to_string(total(b)) : ""));
        // Per tensor only where the structure differs; values are the tensor diff's job.
        std::map<std::string, std::pair<std::string, std::string>> shapes;
        std::vector<std::string> order;
        for (const bool isA : {true, false}) {
            const ckpt::ModelPart* part = isA ? a : b;
            if (!part)
                continue;
            for (const auto& p : part->parameters) {
                if (!shapes.contains(p.name))
                    order.push_back(p.name);
                (isA ? shapes[p.name].first : shapes[p.name].second) = p.dtype + " " + shapeText(p.shape);
            }
        }
        for (const std::string& name : order) {
            CompareRow r = row(name, shapes[name].first, shapes[name].second);
            if (r.status != CompareStatus::Same)
                section.rows.push_back(std::move(r));
        }
        add(std::move(section));
    }

    const ckpt::TrainingState& m_a;
    const ckpt::TrainingState& m_b;
    std::optional<int64_t> m_stepDelta;
    StateComparison m_result;
};

} // namespace

const char* compareStatusName(CompareStatus status)
{
    switch (status) {
    case CompareStatus::Same:
        return "same";
    case CompareStatus::Changed:
        return "changed";
    case CompareStatus::OnlyA:
        return "only in A";
    case CompareStatus::OnlyB:
        return "only in B";
    case CompareStatus::Inconsistent:
        return "inconsistent";
    }
    return "?";
}

StateComparison compareStates(const ckpt::TrainingState& a, const ckpt::TrainingState& b)
{
    return Comparer(a, b).run();
}
