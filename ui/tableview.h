// SPDX-License-Identifier: MIT
// The one look every read-only table of the app shares: whole-row selection, compact rows,
// alternating colours, no row numbers, no editing, and Ctrl+C copy.
#pragma once

class QAbstractItemModel;
class QTableView;
class QWidget;

void setUpReadOnlyTable(QTableView* view);
QTableView* makeReadOnlyTable(QAbstractItemModel* model, QWidget* parent = nullptr);
