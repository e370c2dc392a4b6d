// SPDX-License-Identifier: MIT
#include "ui/models/tensordiffmodel.h"

#include "core/training_state.h"
#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include <map>

namespace {

QString describe(const ckpt::ParameterEntry& p)
{
    return fromUtf8(p.dtype) + QLatin1Char(' ') + formatShape(p.shape);
}

} // namespace

TensorDiffModel::TensorDiffModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void TensorDiffModel::setStates(const std::shared_ptr<const ckpt::TrainingState>& a, const std::shared_ptr<const ckpt::TrainingState>& b)
{
    beginResetModel();
    m_rows.clear();
    std::map<std::string, std::size_t> rowOf;
    auto collect = [&](const std::shared_ptr<const ckpt::TrainingState>& state, bool isA) {
        if (!state || !state->model)
            return;
        for (const ckpt::ParameterEntry& p : state->model->parameters) {
            auto [it, inserted] = rowOf.emplace(p.name, m_rows.size());
            if (inserted)
                m_rows.push_back({fromUtf8(p.name), {}, {}, {}, false});
            (isA ? m_rows[it->second].a : m_rows[it->second].b) = describe(p);
        }
    };
    collect(a, true);
    collect(b, false);
    for (Row& row : m_rows) {
        if (row.a.isEmpty())
            row.status = tr("only in B");
        else if (row.b.isEmpty())
            row.status = tr("only in A");
        else if (row.a != row.b)
            row.status = tr("shape/dtype changed");
        else
            row.status = tr("same shape");
        row.differs = row.a != row.b;
    }
    endResetModel();
}

int TensorDiffModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int TensorDiffModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TensorDiffModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    if (role == Qt::ForegroundRole && index.column() == Status && row.differs)
        return severityColor(1);
    if (role == Qt::ToolTipRole && index.column() >= MaxAbsDiff)
        return tr("Value differences need the tensor diff of the core (issue 4), not merged yet");
    if (role != Qt::DisplayRole)
        return {};
    switch (static_cast<Column>(index.column())) {
    case Tensor:
        return row.name;
    case Status:
        return row.status;
    case A:
        return row.a.isEmpty() ? QStringLiteral("—") : row.a;
    case B:
        return row.b.isEmpty() ? QStringLiteral("—") : row.b;
    case MaxAbsDiff:
    case RelL2:
    case Cosine:
        return QStringLiteral("n/a");
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TensorDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case Tensor:
            return tr("Tensor");
        case Status:
            return tr("Status");
        case A:
            return tr("A");
        case B:
            return tr("B");
        case MaxAbsDiff:
            return tr("max |Δ|");
        case RelL2:
            return tr("rel L2");
        case Cosine:
            return tr("cosine");
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case Tensor:
            return tr("Model parameter or buffer, by state_dict key");
        case Status:
            return tr("Structure: same shape, shape/dtype changed, or saved in only one checkpoint");
        case A:
        case B:
            return tr("dtype and shape in that checkpoint");
        case MaxAbsDiff:
            return tr("Largest absolute element difference |B − A|");
        case RelL2:
            return tr("‖B − A‖₂ / ‖A‖₂: how far the tensor moved, relative to its size");
        case Cosine:
            return tr("Cosine similarity of A and B as vectors: 1 = same direction");
        case ColumnCount:
            break;
        }
    }
    return {};
}
