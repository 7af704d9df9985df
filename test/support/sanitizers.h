// Which sanitizer a test is built with, for GCC and clang alike: GCC defines
// __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__, clang 14 answers
// __has_feature instead. For the few tests that cannot run under one.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define MS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MS_TEST_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define MS_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MS_TEST_TSAN 1
#endif
#endif
