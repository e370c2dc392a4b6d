// SPDX-License-Identifier: MIT
#include "ui/models/tensordiffmodel.h"

#include "ckpt/compare/checkpoint_diff.h"
#include "ckpt/report/text_format.h"
#include "ckpt/state/training_state.h"
#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace {

QString describe(const ckpt::ParameterEntry& p)
{
    return fromUtf8(p.dtype) + QLatin1Char(' ') + formatShape(p.shape);
}

QString describe(const std::string& dtype, const std::vector<int64_t>& shape)
{
    return dtype.empty() ? QString() : fromUtf8(dtype) + QLatin1Char(' ') + formatShape(shape);
}

QString figure(double value)
{
    return QString::fromStdString(ckpt::figure(value, 6));
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
    m_hasValues = false;
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

void TensorDiffModel::setDiff(const ckpt::CheckpointDiff& diff)
{
    beginResetModel();
    m_rows.clear();
    m_hasValues = true;
    for (const ckpt::TensorDiff& t : diff.tensors) {
        Row row;
        row.name = fromUtf8(t.key);
        row.status = t.problem.empty() ? QString::fromLatin1(ckpt::diffStatusName(t.status)) : tr("unreadable: %1").arg(fromUtf8(t.problem));
        row.a = describe(t.dtypeA, t.shapeA);
        row.b = describe(t.dtypeB, t.shapeB);
        row.differs = t.status != ckpt::DiffStatus::Equal || !t.problem.empty();
        row.compared = t.problem.empty() && (t.status == ckpt::DiffStatus::Equal || t.status == ckpt::DiffStatus::Changed);
        row.maxAbs = t.maxAbsDiff;
        row.relL2 = t.relL2;
        row.cosine = t.cosine;
        m_rows.push_back(std::move(row));
    }
    // What changed most first: a restore that lost the optimizer or loaded other weights is the top
    // row, not somewhere among thousands of equal tensors. Then structural differences, then equal.
    auto rank = [](const Row& r) { return !r.differs ? 2 : r.compared ? 0 : 1; };
    std::stable_sort(m_rows.begin(), m_rows.end(), [&](const Row& x, const Row& y) {
        if (rank(x) != rank(y))
            return rank(x) < rank(y);
        const double rx = std::isnan(x.relL2) ? 0 : x.relL2, ry = std::isnan(y.relL2) ? 0 : y.relL2;
        return rank(x) == 0 && rx > ry;
    });
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
    if (role == Qt::ToolTipRole && index.column() >= MaxAbsDiff && !row.compared)
        return m_hasValues ? tr("Not compared: the tensor is in one checkpoint only, or its shape or dtype changed")
                           : tr("Comparing the tensors' values in the background…");
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
        return row.compared ? figure(row.maxAbs) : (m_hasValues ? QStringLiteral("—") : QStringLiteral("…"));
    case RelL2:
        return row.compared ? figure(row.relL2) : (m_hasValues ? QStringLiteral("—") : QStringLiteral("…"));
    case Cosine:
        return row.compared ? figure(row.cosine) : (m_hasValues ? QStringLiteral("—") : QStringLiteral("…"));
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
            return tr("Model parameter or buffer, optimizer moment or other tensor, aligned by name (wrapper prefixes stripped)");
        case Status:
            return tr("equal (bit for bit), changed, shape_changed, dtype_changed, only_a or only_b");
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
