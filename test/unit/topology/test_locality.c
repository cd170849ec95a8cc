#include <string.h>

#include <check.h>

#include "topology/locality.h"

Suite *locality_suite(void);

START_TEST(test_locality_pci_normalize)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "0000:1b:00.0", "0000:1b:00.0" },     { "1B:00.0", "0000:1b:00.0" },
		{ "0001:8A:1f.7", "0001:8a:1f.7" },     { "pci-0000-8a-00-0", "0000:8a:00.0" },
		{ "pci-0002-c0-00-1", "0002:c0:00.1" },
	};
	static const char *const bad[] = {
		"",      "1b:00",         "0000:1b:00.8",  "0000:1b:20.0", "pci-0000-8a-00",
		"gpu-0", "0000:1b:00.0x", "00000:1b:00.0", "zz:00.0"
	};
	char out[RF_PCI_ADDR_LEN];
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_int_eq(rf_pci_normalize(ok[i].in, out), 0);
		ck_assert_str_eq(out, ok[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(rf_pci_normalize(bad[i], out) < 0, "accepted '%s'", bad[i]);
	ck_assert_int_lt(rf_pci_cmp("0000:1b:00.0", "0000:43:00.0"), 0);
	ck_assert_int_lt(rf_pci_cmp("0000:ff:00.0", "0001:00:00.0"), 0);
}
END_TEST

START_TEST(test_locality_levels_from_dra_attributes)
{
	struct rf_locality gpu0 = { "pci0000:15", 0 }, nic0 = { "pci0000:15", 0 },
			   nic1 = { "pci0000:37", 0 }, nic4 = { "pci0000:97", 1 },
			   noroot = { NULL, -1 }, nonuma = { "pci0000:99", -1 };
	enum rf_level_source src;
	ck_assert_int_eq(rf_locality_level(&gpu0, &nic0, &src), RF_LEVEL_PHB);
	ck_assert_int_eq(src, RF_SRC_DRA);
	ck_assert_int_eq(rf_locality_level(&gpu0, &nic1, &src), RF_LEVEL_NODE);
	ck_assert_int_eq(rf_locality_level(&gpu0, &nic4, &src), RF_LEVEL_SYS);
	ck_assert_int_eq(rf_locality_level(&gpu0, &noroot, &src), RF_LEVEL_UNKNOWN);
	ck_assert_int_eq(src, RF_SRC_NONE);
	ck_assert_int_eq(rf_locality_level(&nonuma, &nic1, &src), RF_LEVEL_UNKNOWN);
	/* same root wins even without NUMA facts */
	struct rf_locality a = { "pci0000:99", -1 };
	ck_assert_int_eq(rf_locality_level(&a, &nonuma, NULL), RF_LEVEL_PHB);
}
END_TEST

Suite *
locality_suite(void)
{
	Suite *s = suite_create("locality");
	TCase *tc = tcase_create("locality");
	tcase_add_test(tc, test_locality_pci_normalize);
	tcase_add_test(tc, test_locality_levels_from_dra_attributes);
	suite_add_tcase(s, tc);
	return s;
}
