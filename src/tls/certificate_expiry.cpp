#include "tls/certificate_expiry.hpp"

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

#include <nlohmann/json.hpp>

#include "tls/openssl_error.hpp"

namespace portico::tls {

namespace {

std::vector<std::string> dns_names(X509* leaf) {
    std::vector<std::string> names;
    auto* general =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr));
    for (int i = 0; general && i < sk_GENERAL_NAME_num(general); ++i) {
        const GENERAL_NAME* name = sk_GENERAL_NAME_value(general, i);
        if (name->type != GEN_DNS) continue;
        const ASN1_IA5STRING* dns = name->d.dNSName;
        names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                           static_cast<size_t>(ASN1_STRING_length(dns)));
    }
    GENERAL_NAMES_free(general);
    if (names.empty()) {
        char common_name[256] = {};
        if (X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, common_name,
                                      sizeof common_name) > 0)
            names.emplace_back(common_name);
    }
    return names;
}

FileCertificate read_one(const std::string& file) {
    FileCertificate certificate;
    certificate.file = file;
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(file.c_str(), "r"), BIO_free);
    std::unique_ptr<X509, decltype(&X509_free)> leaf(
        bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
    // The server's load said why already, or will refuse the config.
    clear_openssl_errors();
    if (!leaf) return certificate;
    certificate.names = dns_names(leaf.get());
    std::tm expiry{};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(leaf.get()), &expiry) == 1)
        certificate.not_after = timegm(&expiry);
    return certificate;
}

}  // namespace

std::vector<FileCertificate> read_file_certificates(const config::Config& config) {
    std::vector<const config::CertificateFiles*> files;
    if (config.tls)
        for (const config::CertificateFiles& entry : config.tls->certificates)
            files.push_back(&entry);
    for (const config::SiteConfig& site : config.sites)
        if (site.certificate) files.push_back(&*site.certificate);
    std::vector<FileCertificate> certificates;
    for (const config::CertificateFiles* entry : files) {
        bool seen = false;
        for (const FileCertificate& read : certificates) seen = seen || read.file == entry->cert;
        if (!seen) certificates.push_back(read_one(entry->cert));
    }
    return certificates;
}

std::string file_certificates_json(const std::vector<FileCertificate>& certificates, int64_t now) {
    if (certificates.empty()) return "";
    nlohmann::json entries = nlohmann::json::array();
    for (const FileCertificate& certificate : certificates)
        entries.push_back(
            {{"names", certificate.names},
             {"file", certificate.file},
             {"not_after", certificate.not_after},
             {"expires_in_seconds", certificate.not_after ? certificate.not_after - now : 0}});
    return "\"tls\":" + nlohmann::json{{"certificates", entries}}.dump();
}

}  // namespace portico::tls
