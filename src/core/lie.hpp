// SO(3) / SE(3) logarithms and their Jacobians, as Pinocchio defines them (pin.log3, pin.Jlog3,
// pin.log6, pin.Jlog6): twists are [linear; angular], Jlog is the inverse of the right Jacobian,
// so d/dt log(M) = Jlog(M) * (body velocity of M). Closed forms with Taylor series near 0; the
// tests compare every function with Pinocchio's on random and near-singular arguments.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace reljac::lie {

using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Vector6 = Eigen::Matrix<double, 6, 1>;

constexpr double kSmallAngle = 0.1;  // below: Taylor series (truncation error < 1e-17)

inline Matrix3 skew(const Vector3& v) {
  Matrix3 S;
  S << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return S;
}

// theta in [0, pi] and w = theta * axis with R = exp([w]x).
inline Vector3 log3(const Matrix3& R, double& theta) {
  const Vector3 a(0.5 * (R(2, 1) - R(1, 2)), 0.5 * (R(0, 2) - R(2, 0)), 0.5 * (R(1, 0) - R(0, 1)));  // sin(theta) axis
  const double c = std::clamp(0.5 * (R.trace() - 1.0), -1.0, 1.0);
  const double s = a.norm();
  theta = std::atan2(s, c);
  if (c > -0.9) {  // away from pi the antisymmetric part gives the axis accurately
    const double s2 = s * s;
    // theta / sin(theta) = 1 + s^2/6 + 3 s^4/40 + 5 s^6/112 + ...: the series only where s^6 vanishes
    const double factor = theta < 1e-3 ? 1.0 + s2 / 6.0 + 3.0 * s2 * s2 / 40.0 : theta / s;
    return factor * a;
  }
  // near pi: R ~ 2 k k^T - I + sin(theta) [k]x; the axis from the largest diagonal entry
  const Matrix3 B = 0.5 * (R + R.transpose()) - c * Matrix3::Identity();  // (1 - c) k k^T
  int i = 0;
  B.diagonal().maxCoeff(&i);
  Vector3 k = B.col(i) / std::sqrt(std::max(B(i, i), 1e-300));
  k.normalize();
  if (k.dot(a) < 0) k = -k;
  return theta * k;
}

inline Vector3 log3(const Matrix3& R) {
  double theta;
  return log3(R, theta);
}

// The scalar functions of theta the logarithms need, accurate at every angle:
//   half_cot = (theta / 2) cot(theta / 2) = theta sin / (2 (1 - cos)),
//   beta = 1 / theta^2 - sin / (2 theta (1 - cos)) = (1 - half_cot) / theta^2,
//   beta_dot_over_theta = beta'(theta) / theta.
// Series from cot x = 1/x - x/3 - x^3/45 - 2x^5/945 - x^7/4725 - ... below kSmallAngle; 1 - cos
// as 2 sin^2(theta / 2) above it (no cancellation there).
inline void angle_functions(double theta, double& half_cot, double& beta, double& beta_dot_over_theta) {
  const double t2 = theta * theta;
  if (theta < kSmallAngle) {
    half_cot = 1.0 - t2 * (1.0 / 12.0 + t2 * (1.0 / 720.0 + t2 * (1.0 / 30240.0 + t2 / 1209600.0)));
    beta = 1.0 / 12.0 + t2 * (1.0 / 720.0 + t2 * (1.0 / 30240.0 + t2 * (1.0 / 1209600.0 + t2 / 47900160.0)));
    beta_dot_over_theta = 1.0 / 360.0 + t2 * (1.0 / 7560.0 + t2 * (1.0 / 201600.0 + t2 / 5987520.0));
    return;
  }
  const double sh = std::sin(0.5 * theta);
  const double one_minus_cos = 2.0 * sh * sh;
  const double st = std::sin(theta);
  half_cot = theta * st / (2.0 * one_minus_cos);
  const double t2inv = 1.0 / t2;
  const double inv_2_2ct = 1.0 / (2.0 * one_minus_cos);
  beta = t2inv - st / theta * inv_2_2ct;
  beta_dot_over_theta = -2.0 * t2inv * t2inv + (1.0 + st / theta) * t2inv * inv_2_2ct;
}

// Jlog3 at w = log3(R), theta = |w|: beta w w^T + half_cot I + [w]x / 2.
inline Matrix3 Jlog3(double theta, const Vector3& w) {
  double half_cot, beta, unused;
  angle_functions(theta, half_cot, beta, unused);
  Matrix3 J = beta * w * w.transpose();
  J.diagonal().array() += half_cot;
  J += 0.5 * skew(w);
  return J;
}

inline Matrix3 Jlog3(const Matrix3& R) {
  double theta;
  const Vector3 w = log3(R, theta);
  return Jlog3(theta, w);
}

// log6 of M = (R, p): [linear; angular].
inline Vector6 log6(const Matrix3& R, const Vector3& p) {
  double theta;
  const Vector3 w = log3(R, theta);
  double half_cot, beta, unused;
  angle_functions(theta, half_cot, beta, unused);
  Vector6 out;
  out.head<3>() = half_cot * p - 0.5 * w.cross(p) + (beta * w.dot(p)) * w;
  out.tail<3>() = w;
  return out;
}

// Jlog6 of M = (R, p).
inline Matrix6 Jlog6(const Matrix3& R, const Vector3& p) {
  double theta;
  const Vector3 w = log3(R, theta);
  const Matrix3 A = Jlog3(theta, w);
  double half_cot, beta, bdot;
  angle_functions(theta, half_cot, beta, bdot);
  const double wTp = w.dot(p);
  const Vector3 tmp = (bdot * wTp) * w - (theta * theta * bdot + 2.0 * beta) * p;
  Matrix3 C = tmp * w.transpose() + beta * w * p.transpose();
  C.diagonal().array() += wTp * beta;
  C += skew(0.5 * p);
  Matrix6 J = Matrix6::Zero();
  J.topLeftCorner<3, 3>() = A;
  J.topRightCorner<3, 3>() = C * A;
  J.bottomRightCorner<3, 3>() = A;
  return J;
}

// Ad(M^-1) applied to a twist [v; w] (6): [R^T (v - p x w); R^T w].
inline Vector6 act_inverse(const Matrix3& R, const Vector3& p, const Vector6& twist) {
  Vector6 out;
  out.head<3>() = R.transpose() * (twist.head<3>() - p.cross(twist.tail<3>()));
  out.tail<3>() = R.transpose() * twist.tail<3>();
  return out;
}

}  // namespace reljac::lie
