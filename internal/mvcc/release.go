package mvcc

import "unsafe"

// storeSlotRelease is storeSlot for a table whose values are words, with
// release stores (see storeRelease): it stores word nw and value n in slot
// s, whose word was w, in the order storeSlot does. A Batch writes its
// slots with it. What readers need of those stores, release stores give:
// a reader that sees a slot's new word also sees the undo entry stored
// before it, and one that sees the new value sees the new word, so that
// its second load of the word tells it the value is not the one it read
// the word for. The version that publishes the batch is stored with
// sync/atomic, which makes every store before it visible first. Writer
// only.
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
