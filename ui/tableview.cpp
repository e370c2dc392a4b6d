// SPDX-License-Identifier: MIT
#include "ui/tableview.h"

#include "ui/copyaction.h"

#include <QHeaderView>
#include <QTableView>

void setUpReadOnlyTable(QTableView* view)
{
    view->setAlternatingRowColors(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->setWordWrap(false);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setStretchLastSection(true);
    view->setTabKeyNavigation(false); // Tab goes on to the next widget, arrows move in the table
    installCopyAction(view);
}

QTableView* makeReadOnlyTable(QAbstractItemModel* model, QWidget* parent)
{
    auto* view = new QTableView(parent);
    view->setModel(model);
    setUpReadOnlyTable(view);
    return view;
}
