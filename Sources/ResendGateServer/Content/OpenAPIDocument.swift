/// The OpenAPI document served at `/openapi.yaml`.
enum OpenAPIDocument {
    static let yaml = """
        openapi: 3.0.3
        info: {title: resendgate, version: "1"}
        paths: {}
        """
}
