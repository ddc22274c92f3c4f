//go:build !race && !purego

#include "go_asm.h"
#include "textflag.h"

// func releaseWords(puts []Put)
TEXT ·releaseWords(SB), NOSPLIT, $0-24
	MOVQ	puts_base+0(FP), SI
	MOVQ	puts_len+8(FP), CX
	TESTQ	CX, CX
	JZ	done
loop:
	MOVQ	Put_word(SI), DI
	TESTQ	DI, DI
	JZ	next
	MOVQ	Put_val(SI), AX
	MOVQ	AX, (DI)
next:
	ADDQ	$Put__size, SI
	DECQ	CX
	JNZ	loop
done:
	RET
