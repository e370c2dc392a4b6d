// SPDX-License-Identifier: MIT
// The optimizer's param groups: one row per group, one column per hyperparameter (the union
// over groups; a group without one leaves it empty), plus its parameter count.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace ckpt {
struct OptimizerPart;
}

class ParamGroupsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Group, Parameters, FirstHyperparameter };

    explicit ParamGroupsModel(QObject* parent = nullptr);

    /// Null clears the table.
    void setOptimizer(const ckpt::OptimizerPart* optimizer);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QStringList m_names;                  // hyperparameter columns
    std::vector<QStringList> m_values;    // per group, per hyperparameter
    std::vector<QStringList> m_sources;
    std::vector<int> m_parameterCounts;
};
