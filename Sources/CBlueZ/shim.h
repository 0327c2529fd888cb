// The BlueZ declarations the socket layer needs (libbluetooth-dev).
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>

// The Clang importer drops macros built with _IOW/_IOR and compound
// literals, so they are re-exported here under quench_ names.

static const unsigned long QUENCH_HCIDEVUP = HCIDEVUP;
static const unsigned long QUENCH_HCIDEVDOWN = HCIDEVDOWN;
static const unsigned long QUENCH_HCIGETDEVLIST = HCIGETDEVLIST;
static const unsigned long QUENCH_HCIGETDEVINFO = HCIGETDEVINFO;
static const int QUENCH_HCI_UP_FLAG = HCI_UP;

static inline bdaddr_t quench_bdaddr_any(void) {
    bdaddr_t any = {{0, 0, 0, 0, 0, 0}};
    return any;
}

// ioctl is variadic in C; Swift cannot call it directly.
static inline int quench_ioctl_int(int fd, unsigned long request, int arg) {
    return ioctl(fd, request, arg);
}

static inline int quench_ioctl_ptr(int fd, unsigned long request, void *arg) {
    return ioctl(fd, request, arg);
}

// HCIGETDEVLIST fills a struct with a flexible array member, which Swift
// cannot lay out; this copies the device ids into `ids` (at most `max`).
// Returns the count, or -1 with errno set.
static inline int quench_hci_dev_list(int fd, uint16_t *ids, int max) {
    if (max <= 0 || max > HCI_MAX_DEV) max = HCI_MAX_DEV;
    char buffer[sizeof(struct hci_dev_list_req) + HCI_MAX_DEV * sizeof(struct hci_dev_req)];
    struct hci_dev_list_req *list = (struct hci_dev_list_req *)buffer;
    list->dev_num = (uint16_t)max;
    if (ioctl(fd, HCIGETDEVLIST, (void *)list) < 0) return -1;
    for (int i = 0; i < list->dev_num && i < max; i++) ids[i] = list->dev_req[i].dev_id;
    return list->dev_num < max ? list->dev_num : max;
}
