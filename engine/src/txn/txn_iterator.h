// TxnIterator: a transaction's view of one column family — the database iterator at the
// transaction's read view merged with the transaction's write set (its writes win; its
// deletes hide keys), within optional [lower, upper) bounds.
//
// The write set is looked up by key at every move, so writes made while the iterator is
// open are seen from its next move on. For serializable transactions the iterator
// records the key ranges it has looked at (for phantom validation at commit): each Seek*
// starts a range, each move extends it to the key reached, and running off an end
// extends it to that bound. The ranges carry range_read_seq (KeyRange::read_seq).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tidesdb/iterator.h"
#include "txn/recent_commit_index.h"
#include "txn/write_set.h"

namespace tidesdb {

// `ws` and `ranges` (nullptr: do not record) must outlive the iterator; `base` must
// honor the same bounds.
std::unique_ptr<Iterator> NewTxnIterator(std::unique_ptr<Iterator> base, const WriteSet* ws, uint32_t cf_id,
                                         std::optional<std::string> lower_bound,
                                         std::optional<std::string> upper_bound,
                                         std::vector<KeyRange>* ranges, uint64_t range_read_seq = 0);

}  // namespace tidesdb
