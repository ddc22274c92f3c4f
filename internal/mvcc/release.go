package mvcc

import "unsafe"

// storeSlotRelease is storeSlot for a table whose values are words, with
// release stores (see storeRelease): it stores word nw and value n in slot
// s, whose word was w, in the order storeSlot does.
//
// What readers need of a slot's stores, release stores give: a reader
// that sees a slot's new word also sees what the writer stored before it
// (the undo entry of a Batch, the record or page copy that keeps the old
// value), and one that sees the new value sees the new word, so that its
// second load of the word tells it the value is not the one it read the
// word for. A write outside a Batch ends with an atomic operation on the
// table's state (the compare-and-swap that ends a change in place, or the
// store that publishes the next version), and a Batch ends with the store
// that publishes it: on amd64 either waits until the slot's stores are
// visible, so a reader that learns of the write from the state, or takes
// a snapshot after it, sees them. Writer only.
func storeSlotRelease(s *slot, w, nw, n uint64) {
	word := (*uint64)(unsafe.Pointer(&s.word))
	if w == 0 || w&deleted != 0 {
		storeRelease(&s.v, n)
		storeRelease(word, nw)
		return
	}
	storeRelease(word, nw)
	storeRelease(&s.v, n)
}
