// SPDX-License-Identifier: MIT
// The compare view's tensor table: every model tensor of A and B by name with its status (same
// shape, shape or dtype changed, only in one). The value columns (max |Δ|, rel L2, cosine) wait for
// the tensor diff of the core (issue 4); until then they say so instead of showing numbers.
#pragma once

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace ckpt {
struct TrainingState;
struct CheckpointDiff;
}

class TensorDiffModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Tensor, Status, A, B, MaxAbsDiff, RelL2, Cosine, ColumnCount };

    explicit TensorDiffModel(QObject* parent = nullptr);

    /// Structure only (dtype and shape per model key), shown while the values are compared.
    void setStates(const std::shared_ptr<const ckpt::TrainingState>& a, const std::shared_ptr<const ckpt::TrainingState>& b);
    /// Every aligned tensor (model, optimizer moments, others) with the value differences.
    void setDiff(const ckpt::CheckpointDiff& diff);
    bool hasValues() const { return m_hasValues; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString name, status, a, b;
        bool differs = false;
        bool compared = false; // the figures below hold (same dtype and shape, bytes read)
        double maxAbs = 0, relL2 = 0, cosine = 0;
    };
    std::vector<Row> m_rows;
    bool m_hasValues = false;
};
