// SPDX-License-Identifier: MIT
#include "ui/pages/stategrid.h"

#include "ckpt/state/training_state.h"
#include "ui/textformat.h"

#include <QCoreApplication>
#include <QFileInfo>

#include <algorithm>
#include <map>
#include <set>

using namespace ckpt;

namespace {

// One value with where it was read and which rank's file holds it (-1: the whole checkpoint).
struct Fact {
    QString part;
    QString name;  // without rank or file
    QString group; // facts of one group in the checkpoint column must agree (epoch in two files)
    int rank = -1;
    QString file;  // base name of the file it came from
    QString value;
    QString source;
};

QString number(double v)
{
    return QString::number(v, 'g', 17);
}

int rankOfFile(const TrainingState& state, const std::string& path)
{
    for (const LayoutFile& f : state.layout.files) {
        if (f.path == path)
            return f.rank;
    }
    return -1;
}

QString baseName(const std::string& path)
{
    return QFileInfo(fromUtf8(path)).fileName();
}

void addGenerator(const RngPart::Generator& g, std::vector<Fact>& out)
{
    const QString name = QLatin1String(rngKindName(g.state.kind)) + QStringLiteral(" (") + formatKey(g.state.key)
        + QLatin1Char(')');
    const QString source = fromUtf8(g.file) + QStringLiteral(": ") + formatKey(g.state.key);
    auto add = [&](const QString& field, const QString& value) {
        out.push_back({QStringLiteral("R"), name + QLatin1Char(' ') + field, {}, g.rank, baseName(g.file), value, source});
    };
    add(QStringLiteral("fingerprint"), fromUtf8(g.state.fingerprint));
    add(QStringLiteral("state"), g.state.valid ? QStringLiteral("ok") : fromUtf8(g.state.problem));
    if (g.state.position)
        add(QStringLiteral("position"), QString::number(*g.state.position));
    if (g.state.seed)
        add(QStringLiteral("seed"), QString::number(*g.state.seed));
    if (g.state.offset)
        add(QStringLiteral("offset"), QString::number(*g.state.offset));
    if (g.state.gaussCache)
        add(QStringLiteral("cached normal"), number(*g.state.gaussCache));
    if (g.state.drawnSinceSeed)
        add(QStringLiteral("words drawn since the seed"), QString::number(*g.state.drawnSinceSeed));
}

void addFields(const TrainingState& state, const QString& part, const std::vector<StateField>& fields,
               std::vector<Fact>& out)
{
    for (const StateField& f : fields) {
        const QString name = fromUtf8(f.name);
        out.push_back({part, name, name, rankOfFile(state, f.from.file), baseName(f.from.file), fromUtf8(f.value),
                       fromUtf8(f.from.file) + QStringLiteral(": ") + formatKey(f.from.key)});
    }
}

std::vector<Fact> factsOf(const TrainingState& state)
{
    std::vector<Fact> facts;
    if (state.rng) {
        for (const RngPart::Generator& g : state.rng->generators)
            addGenerator(g, facts);
    }
    addFields(state, QStringLiteral("D"), state.data, facts);
    addFields(state, QStringLiteral("C"), state.progress, facts);
    return facts;
}

// Rows in first-seen order; each fact lands in its row's column.
class GridBuilder {
public:
    explicit GridBuilder(QStringList columns) { m_grid.columns = std::move(columns); }

    void put(const Fact& fact, const QString& rowName, int column)
    {
        auto [it, inserted] = m_index.try_emplace(rowName, m_grid.rows.size());
        if (inserted) {
            StateGrid::Row row;
            row.part = fact.part;
            row.name = rowName;
            for (int i = 0; i < m_grid.columns.size(); ++i) {
                row.values.append(QString());
                row.sources.append(QString());
            }
            m_grid.rows.push_back(std::move(row));
            m_groups.push_back(fact.group);
        }
        StateGrid::Row& row = m_grid.rows[it->second];
        row.values[column] = fact.value;
        row.sources[column] = fact.source;
    }

    StateGrid finish()
    {
        for (StateGrid::Row& row : m_grid.rows) {
            std::set<QString> distinct;
            for (const QString& v : row.values) {
                if (!v.isEmpty())
                    distinct.insert(v);
            }
            row.differs = distinct.size() > 1;
        }
        // The same counter saved in two files of one checkpoint must agree.
        std::map<QString, std::set<QString>> groupValues;
        for (std::size_t i = 0; i < m_grid.rows.size(); ++i) {
            if (!m_groups[i].isEmpty())
                groupValues[m_groups[i]].insert(m_grid.rows[i].values.join(QChar(0x1f)));
        }
        for (std::size_t i = 0; i < m_grid.rows.size(); ++i) {
            if (!m_groups[i].isEmpty() && groupValues[m_groups[i]].size() > 1)
                m_grid.rows[i].differs = true;
        }
        return std::move(m_grid);
    }

private:
    StateGrid m_grid;
    std::map<QString, std::size_t> m_index;
    std::vector<QString> m_groups;
};

QString tr(const char* text)
{
    return QCoreApplication::translate("StateGrid", text);
}

} // namespace

StateGrid stateGridByRank(const TrainingState& state)
{
    const std::vector<Fact> facts = factsOf(state);
    bool shared = false;
    int maxRank = -1;
    for (const Fact& f : facts) {
        shared = shared || f.rank < 0;
        maxRank = std::max(maxRank, f.rank);
    }
    QStringList columns;
    if (shared)
        columns.append(tr("checkpoint"));
    for (int r = 0; r <= maxRank; ++r)
        columns.append(tr("rank %1").arg(r));
    GridBuilder grid(columns);
    for (const Fact& f : facts) {
        if (f.rank < 0) {
            grid.put(f, f.name + QStringLiteral(" [") + f.file + QLatin1Char(']'), 0);
        } else {
            Fact perRank = f;
            perRank.group.clear(); // ranks are compared within the row
            grid.put(perRank, f.name, f.rank + (shared ? 1 : 0));
        }
    }
    StateGrid out = grid.finish();
    // Each rank is seeded apart (seed + rank): one state on every rank means they were reseeded
    // alike, and draw the same dropout masks and augmentations.
    for (StateGrid::Row& row : out.rows) {
        if (row.part != QLatin1String("R") || !row.name.endsWith(QLatin1String(" fingerprint")) || row.differs)
            continue;
        const auto filled = std::count_if(row.values.begin(), row.values.end(), [](const QString& v) { return !v.isEmpty(); });
        if (filled > 1)
            row.note = tr("every rank holds the same generator state: ranks reseeded alike draw the same random numbers");
    }
    return out;
}

StateGrid stateGridByCheckpoint(const std::vector<std::shared_ptr<const TrainingState>>& states,
                                const QStringList& labels)
{
    GridBuilder grid(labels);
    for (std::size_t c = 0; c < states.size() && c < static_cast<std::size_t>(labels.size()); ++c) {
        if (!states[c])
            continue;
        for (Fact f : factsOf(*states[c])) {
            QString name = f.rank >= 0 ? tr("rank %1 · %2").arg(f.rank).arg(f.name)
                                       : f.name + QStringLiteral(" [") + f.file + QLatin1Char(']');
            f.group.clear(); // across checkpoints, each row is compared on its own
            grid.put(f, name, static_cast<int>(c));
        }
    }
    return grid.finish();
}
