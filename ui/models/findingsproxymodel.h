// SPDX-License-Identifier: MIT
// The findings dock's filters: a minimum severity and one component (or all).
#pragma once

#include <QSortFilterProxyModel>

class FindingsProxyModel final : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit FindingsProxyModel(QObject* parent = nullptr);

    /// ckpt::Severity as int; 0 shows everything.
    void setMinimumSeverity(int severity);
    /// ckpt::Component as int; -1 shows every component.
    void setComponent(int component);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    int m_minimumSeverity = 0;
    int m_component = -1;
};
