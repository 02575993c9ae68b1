# The KVM probe's guest: a boot program that takes the path a real guest's boot takes and
# writes a marker to COM1 after each step, so the probe can tell "KVM runs guests" from "QEMU
# started, and then its vCPU stopped or got stuck". Owned here, not borrowed from a boot loader,
# because it must be tiny, carried inside the binary, and say how far it got.
#
# Markers are "bowline-probe:STEP\n", in this order (engine/kvm_probe_guest.hpp names them):
#   boot      the firmware ran this sector (real mode)
#   real      the BIOS's disk service loaded the rest of the program (int 13h, EDD)
#   big-real  big real mode: a 4 GiB segment limit from real mode, as SYSLINUX and GRUB use
#   irq       32-bit protected mode with an IDT: a software interrupt and 20 timer IRQs, each
#             returning with IRET. On hosts whose nested virtualisation is partial, KVM's
#             emulator fails right here ("KVM internal error ... emulation failure"), as it does
#             in SYSLINUX's core, while a guest without a boot disk runs on for ever.
#   long      long mode with paging
#   ok        CPUID in long mode
#
# Built by src/engine/CMakeLists.txt with binutils' as and ld into a flat image linked at 0x7c00.

        .code16
        .text
        .globl  _start
_start:
        cli
        xorw    %ax, %ax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movw    $0x7c00, %sp
        ljmp    $0, $1f
1:      movb    %dl, drive
        movw    $m_boot, %si
        call    print16
        movw    $dap, %si
        movb    drive, %dl
        movb    $0x42, %ah
        int     $0x13
        jc      halt16
        jmp     stage2
halt16: cli
        hlt
        jmp     halt16

print16:
        lodsb
        testb   %al, %al
        jz      1f
        movw    $0x3f8, %dx
        outb    %al, %dx
        jmp     print16
1:      ret
m_boot: .asciz  "bowline-probe:boot\n"

        .p2align 2
dap:    .byte   0x10, 0
        .word   (end - stage2 + 511) / 512      # sectors after this one
        .word   0x7e00, 0                       # to 0000:7e00
        .quad   1                               # from LBA 1
drive:  .byte   0

        .org    510
        .word   0xaa55

# --- sector 1 on: loaded at 0x7e00 ---------------------------------------------------------
stage2:
        movw    $m_real, %si
        call    print16

        # A20 through the fast gate, then big real mode: a 4 GiB data segment in %fs.
        inb     $0x92, %al
        orb     $2, %al
        andb    $0xfe, %al
        outb    %al, $0x92
        lgdtl   gdtr
        movl    %cr0, %eax
        orb     $1, %al
        movl    %eax, %cr0
        jmp     1f
1:      movw    $0x10, %bx
        movw    %bx, %fs
        andb    $0xfe, %al
        movl    %eax, %cr0
        jmp     2f
2:      movl    $0x5aa5c33c, %eax
        addr32 movl %eax, %fs:0x100000
        addr32 movl %fs:0x100000, %ebx
        cmpl    %eax, %ebx
        jne     halt16
        movw    $m_big, %si
        call    print16

        movl    %cr0, %eax
        orb     $1, %al
        movl    %eax, %cr0
        ljmp    $0x08, $pm32


        .code32
pm32:
        movw    $0x10, %ax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movl    $0x7c00, %esp
        # The IDT at 0x4000: all 256 vectors to one handler.
        movl    $0x4000, %edi
        movl    $256, %ecx
1:      movl    $handler, %eax
        movw    %ax, (%edi)
        movw    $0x08, 2(%edi)
        movw    $0x8e00, 4(%edi)
        shrl    $16, %eax
        movw    %ax, 6(%edi)
        addl    $8, %edi
        loop    1b
        lidtl   idtr
        int     $0x30
        # The PICs: IRQs to vectors 0x20-0x2f, only the timer unmasked; the PIT at about 1 kHz.
        movb    $0x11, %al
        outb    %al, $0x20
        outb    %al, $0xa0
        movb    $0x20, %al
        outb    %al, $0x21
        movb    $0x28, %al
        outb    %al, $0xa1
        movb    $4, %al
        outb    %al, $0x21
        movb    $2, %al
        outb    %al, $0xa1
        movb    $1, %al
        outb    %al, $0x21
        outb    %al, $0xa1
        movb    $0xfe, %al
        outb    %al, $0x21
        movb    $0xff, %al
        outb    %al, $0xa1
        movb    $0x34, %al
        outb    %al, $0x43
        movb    $0xa9, %al
        outb    %al, $0x40
        movb    $0x04, %al
        outb    %al, $0x40
        movl    $0, ticks
        sti
2:      hlt
        cmpl    $20, ticks
        jb      2b
        cli
        movl    $m_irq, %esi
        call    print32

        # Identity-map the first 2 MiB with one large page, then long mode.
        movl    $0x1000, %edi
        movl    $0xc00, %ecx
        xorl    %eax, %eax
        rep stosl
        movl    $0x2003, 0x1000
        movl    $0x3003, 0x2000
        movl    $0x0083, 0x3000
        movl    %cr4, %eax
        orl     $0x20, %eax
        movl    %eax, %cr4
        movl    $0x1000, %eax
        movl    %eax, %cr3
        movl    $0xc0000080, %ecx
        rdmsr
        orl     $0x100, %eax
        wrmsr
        movl    %cr0, %eax
        orl     $0x80000000, %eax
        movl    %eax, %cr0
        ljmp    $0x18, $long

handler:
        pusha
        incl    ticks
        movb    $0x20, %al
        outb    %al, $0x20
        popa
        iret

print32:
        lodsb
        testb   %al, %al
        jz      1f
        movw    $0x3f8, %dx
        outb    %al, %dx
        jmp     print32
1:      ret

        .code64
long:
        movl    $m_long, %esi
        call    print64
        xorl    %eax, %eax
        cpuid
        movl    $1, %eax
        cpuid
        movl    $m_ok, %esi
        call    print64
1:      cli
        hlt
        jmp     1b

print64:
        lodsb
        testb   %al, %al
        jz      1f
        movw    $0x3f8, %dx
        outb    %al, %dx
        jmp     print64
1:      ret

        .p2align 3
gdt:    .quad   0
        .quad   0x00cf9a000000ffff      # 0x08: 32-bit code
        .quad   0x00cf92000000ffff      # 0x10: 4 GiB data
        .quad   0x00209a0000000000      # 0x18: 64-bit code
gdtr:   .word   gdtr - gdt - 1
        .long   gdt
idtr:   .word   256 * 8 - 1
        .long   0x4000
ticks:  .long   0

m_real: .asciz  "bowline-probe:real\n"
m_big:  .asciz  "bowline-probe:big-real\n"
m_irq:  .asciz  "bowline-probe:irq\n"
m_long: .asciz  "bowline-probe:long\n"
m_ok:   .asciz  "bowline-probe:ok\n"
        .p2align 9
end:
